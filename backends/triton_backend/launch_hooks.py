"""Records which ``@triton.jit`` kernels a candidate really launched, and can turn them off.

Installed by the worker before any candidate is imported (the candidate cannot undo it: the
static rules forbid touching private attributes or assigning into modules). While a kernel
launch is in progress the torch op policy is suspended, because Triton's own launch path
(and its CPU interpreter, and the autotuner's benchmarking) use torch internally.
"""

from __future__ import annotations

import functools
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
