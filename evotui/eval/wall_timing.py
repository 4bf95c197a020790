"""Timing by the wall clock, for Triton's CPU interpreter: reported, never as kernel speed
(the same protocol as ``evotui.eval.timing.CudaTimer``, without a GPU)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

from evotui.eval.timing_stats import FRESH_KINDS, FreshCheck, Timing, robust_spread_pct


def time_interpreter(fn: Callable[[], Any], calls: int = 2,
                     prepare: Callable[[], None] | None = None) -> Timing:
    """Wall time under Triton's CPU interpreter: reported, but never as kernel speed."""
    samples = []
    for _ in range(calls):
        if prepare is not None:
            prepare()
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1000)
    return Timing(median_ms=statistics.median(samples), spread_pct=robust_spread_pct(samples),
                  samples=calls, method="interpreter")


def wall_fresh_vs_same(fn: Callable[[], Any], refresh: Callable[[int, str], None],
                       rounds: int = 3) -> FreshCheck:
    """``CudaTimer.fresh_vs_same`` by the wall clock, for the CPU interpreter: the fastest
    of the rounds (a busy CPU only ever adds time)."""
    times: list[list[float]] = [[] for _ in FRESH_KINDS]
    for i in range(rounds):
        for k, kind in enumerate(FRESH_KINDS):
            refresh(i, kind)
            t0 = time.perf_counter()
            fn()
            times[k].append((time.perf_counter() - t0) * 1000)
    return FreshCheck(min(times[0]), min(times[1]), rounds, min(times[2]))
