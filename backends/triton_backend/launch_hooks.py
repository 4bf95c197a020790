"""Records which ``@triton.jit`` kernels a candidate really launched, and can turn them off.

Installed by the worker before any candidate is imported (the candidate cannot undo it: the
static rules forbid touching private attributes or assigning into modules). While a kernel
launch is in progress the torch op policy is suspended, because Triton's own launch path
(and its CPU interpreter, and the autotuner's benchmarking) use torch internally.
"""

from __future__ import annotations

import functools
import os
import time
from collections import Counter
from collections.abc import Callable
from typing import Any


class LaunchRecorder:
    def __init__(self) -> None:
        self.launches: Counter[str] = Counter()
        self.ghost = False  # when True, kernel launches are skipped ("ghost replay")
        self.on_enter: Callable[[], None] = lambda: None
        self.on_exit: Callable[[], None] = lambda: None
        self._installed = False

    def reset(self) -> None:
        self.launches.clear()

    @property
    def total(self) -> int:
        return sum(self.launches.values())

    def install(self) -> None:
        if self._installed:
            return
        from triton.runtime import autotuner, jit

        classes: list[type] = [jit.JITFunction]
        try:
            from triton.runtime.interpreter import InterpretedFunction

            classes.append(InterpretedFunction)
        except ImportError:  # pragma: no cover - very old triton
            pass
        for cls in classes:
            cls.run = self._wrap_leaf(cls.run)  # type: ignore[method-assign]
        for cls in (autotuner.Autotuner, autotuner.Heuristics):
            cls.run = self._wrap_outer(cls.run)  # type: ignore[method-assign]
        if os.environ.get("TRITON_INTERPRET") == "1":
            # The interpreter has no driver to benchmark autotune configs with; a wall-clock
            # benchmarker lets honest autotuned candidates run (the choice is meaningless).
            autotuner.Autotuner.do_bench = property(lambda _self: _wall_clock_bench)
            from backends.triton_backend.interpreter_fixes import apply_interpreter_fixes

            apply_interpreter_fixes()
        self._installed = True

    def _wrap_leaf(self, original: Callable[..., Any]) -> Callable[..., Any]:
        recorder = self

        @functools.wraps(original)
        def run(fn_self: Any, *args: Any, grid: Any = None, warmup: bool = False, **kwargs: Any):
            if warmup:
                return original(fn_self, *args, grid=grid, warmup=warmup, **kwargs)
            name = getattr(getattr(fn_self, "fn", None), "__name__", "kernel")
            recorder.launches[name] += 1
            if recorder.ghost:
                return None
            recorder.on_enter()
            try:
                return original(fn_self, *args, grid=grid, warmup=warmup, **kwargs)
            finally:
                recorder.on_exit()

        return run

    def _wrap_outer(self, original: Callable[..., Any]) -> Callable[..., Any]:
        recorder = self

        @functools.wraps(original)
        def run(fn_self: Any, *args: Any, **kwargs: Any):
            recorder.on_enter()
            try:
                return original(fn_self, *args, **kwargs)
            finally:
                recorder.on_exit()

        return run


def _wall_clock_bench(kernel_call: Callable[[], Any], quantiles: Any = None) -> list[float]:
    t0 = time.perf_counter()
    kernel_call()
    ms = (time.perf_counter() - t0) * 1000
    return [ms] * (len(quantiles) if quantiles else 1)
