"""Evaluating candidates: worker processes, correctness and anti-cheat checks, timing.

Importing this package is cheap and never imports textual (invariant 1); the heavy parts
(torch, triton) load inside the worker processes.
"""

from evotui.eval.pool import EvaluatorPool, detect_devices
from evotui.eval.results import ABResult, EvalRequest, EvalResult

__all__ = ["ABResult", "EvaluatorPool", "EvalRequest", "EvalResult", "detect_devices"]
