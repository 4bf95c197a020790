"""Records which ``@triton.jit`` kernels a candidate really launched, and can turn them off.

Installed by the worker before any candidate is imported (the candidate cannot undo it: the
static rules forbid touching private attributes or assigning into modules). On a GPU, while
a kernel launch is in progress the torch op policy is suspended, because Triton's own launch
path (and the autotuner's benchmarking) use torch internally. Under the CPU interpreter the
policy stays on through the launch and the tuners, suspended only while Triton copies the
arguments to the host and back (the launch touches candidate objects in more places than
any argument check covers). The
candidate's own code that Triton calls back during a launch — a grid callable,
``triton.heuristics`` values, autotune hooks and config pruning — runs with the policy
active again (else ``grid=lambda meta: (torch.softmax(x, -1), (1,))[1]`` would compute the
result in torch unseen). Kernel arguments must be of plain types (tensors, numbers, strings,
dtypes, TMA descriptors, tuples of these: launch_arguments), and what Triton parses for a
kernel must be its checked text (checked_texts).
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
import types
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

from evotui.dialects.base import Recorder
from evotui.dialects.triton.checked_texts import CheckedTexts, KernelSourceMismatch
from evotui.dialects.triton.launch_arguments import (
    KernelArgumentError,
    check_constexpr_arguments,
    check_kernel_arguments,
    check_tuner,
    checked_grid,
)

__all__ = ["KernelArgumentError", "KernelSourceMismatch", "LaunchRecorder"]


class LaunchRecorder(Recorder):
    def __init__(self) -> None:
        self.launches: Counter[str] = Counter()
        self.ghost = False  # when True, kernel launches are skipped ("ghost replay")
        self.on_enter: Callable[[], None] = lambda: None
        self.on_exit: Callable[[], None] = lambda: None
        # raises if the harness's code was replaced (set by the worker)
        self.verify_harness: Callable[..., None] = lambda when="": None
        self.depth = 0  # nested suspensions (an autotuner around a launch, ...)
        self.interpreted = False  # Triton's CPU interpreter (set by install)
        self._installed = False
        # the candidate files' checked kernels, and the hooks on where Triton parses them
        self.texts = CheckedTexts()
        # id(kernel) -> (kernel, its function, the text read) whose text matched
        self._confirmed: dict[int, tuple[Any, Any, Any]] = {}

    @property
    def kernels(self) -> dict[str, dict[int, Any]] | None:
        """The checked kernels by file and first line; None before any ``approve``."""
        return self.texts.kernels

    def approve(self, filename: str, source: str) -> None:
        """The kernels of a candidate file, as the static rules checked them
        (``CheckedTexts.approve``)."""
        self.texts.approve(filename, source)

    def confirm_text(self, fn: Any, read: str | None) -> None:
        """``read`` is the checked text of the def ``fn`` runs (``CheckedTexts.confirm``)."""
        self.texts.confirm(fn, read)

    def check_kernel(self, kernel: Any) -> None:
        """A launched kernel must run one of the checked defs, as Triton built it: not a
        function wrapped some other way (``type(kernel)(body)``) nor an object whose
        methods were replaced on the instance (``self.k.rewrite = ...``)."""
        if self.kernels is None:
            return
        from triton.runtime.jit import JITFunction

        kinds = [JITFunction]
        try:
            from triton.runtime.interpreter import InterpretedFunction

            kinds.append(InterpretedFunction)
        except ImportError:  # pragma: no cover - very old triton
            pass
        if type(kernel) not in kinds:
            raise KernelArgumentError(f"a `{type(kernel).__name__}` launched as a kernel")
        fn = vars(kernel).get("fn")
        self.texts.checked(fn)
        # the text Triton compiles for it is that def's, as checked: a JITFunction parses its
        # `_src`; the interpreter what `interpreter_text` gives (each confirmed once)
        state = vars(kernel)
        read = (state["_src"] if "_src" in state else state.get("src")) \
            if type(kernel) is JITFunction else None
        seen = self._confirmed.get(id(kernel))
        if seen is None or seen[0] is not kernel or seen[1] is not fn or seen[2] is not read:
            self.confirm_text(fn, read if type(kernel) is JITFunction else self.texts.interpreter_text(fn))
            self._confirmed[id(kernel)] = (kernel, fn, read)
        shadowed = [k for k in vars(kernel) if not k.startswith("__") and hasattr(type(kernel), k)]
        if shadowed:
            raise KernelArgumentError(f"the kernel object's `{shadowed[0]}` was replaced")
        # defaults are arguments too (Triton binds them): an object there is code the body runs
        check_kernel_arguments(tuple(fn.__defaults__ or ()), dict(fn.__kwdefaults__ or {}))

    def check_kernel_values(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """Kernels passed as arguments (`ACT=gelu`, called by the body as device functions)
        are held to ``check_kernel`` too: `type(kernel)(body)` is a kernel object."""
        import triton.language as tl

        def walk(value: Any) -> None:
            kind = type(value)
            if kind in (tuple, list):
                for item in value:
                    walk(item)
            elif kind is tl.constexpr:
                walk(value.value)
            elif hasattr(kind, "run") and kind.__module__.startswith("triton.runtime"):
                self.check_kernel(value)

        for value in [*args, *(v for k, v in kwargs.items() if k not in ("grid", "warmup"))]:
            walk(value)

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
        self.texts.hook_gpu_parse(jit)
        self.interpreted = os.environ.get("TRITON_INTERPRET") == "1"
        if self.interpreted:
            self.texts.hook_interpreter_rewrite()
            # The interpreter has no driver to benchmark autotune configs with; a wall-clock
            # benchmarker lets honest autotuned candidates run (the choice is meaningless).
            autotuner.Autotuner.do_bench = property(lambda _self: _wall_clock_bench)
            from evotui.dialects.triton.interpreter_fixes import apply_interpreter_fixes
            from evotui.dialects.triton.interpreter_globals import isolate_kernel_globals

            apply_interpreter_fixes()
            isolate_kernel_globals()
            self._suspend_only_for_copies()
        self._installed = True

    def _suspend_only_for_copies(self) -> None:
        """Under the interpreter a launch runs with the policy watching (Triton's
        launch touches candidate objects in more places than any check covers); suspended
        only while Triton copies the arguments to the host and back (its own torch ops)."""
        from triton.runtime import interpreter

        executor = interpreter.GridExecutor
        for name in ("_init_args_hst", "_restore_args_dev"):
            original = getattr(executor, name)
            if getattr(original, "evotui_copies", False):
                continue
            setattr(executor, name, self._triton_internal(original, recheck=name == "_restore_args_dev"))

    def _triton_internal(self, original: Callable[..., Any], recheck: bool = False) -> Callable[..., Any]:
        recorder = self

        def internal(*args: Any, **kwargs: Any) -> Any:
            recorder.verify_harness("while a kernel launched")
            if recheck:
                # (executor, args_dev, args_hst, kwargs, kwargs_hst): the grid callable and the
                # body ran since the launch checked the arguments, and could rebuild one in
                # place (`desc.__init__(probe, ...)`); Triton now reads them unwatched
                check_kernel_arguments(tuple(args[1]), dict(args[3]))
            recorder._suspend()
            try:
                return original(*args, **kwargs)
            finally:
                recorder._resume()

        internal.evotui_copies = True  # type: ignore[attr-defined]
        internal.evotui_patched = getattr(original, "evotui_patched", False)  # type: ignore[attr-defined]
        return internal

    @contextlib.contextmanager
    def watching_all(self) -> Iterator[None]:
        """The policy fully active, also inside a tuner's run."""
        depth = self.depth
        for _ in range(depth):
            self._resume()
        try:
            yield
        finally:
            for _ in range(depth):
                self._suspend()

    def _suspend(self) -> None:
        self.depth += 1
        self.on_enter()

    def _resume(self) -> None:
        self.depth -= 1
        self.on_exit()

    def candidate_code(self, fn: Any) -> Any:
        """``fn`` (the candidate's, called by Triton during a launch) run with the policy
        fully active; idempotent."""
        # already ours: a function with our wrapper's code (an attribute would do for a mark,
        # but a candidate class can set one)
        if not callable(fn) or (type(fn) is types.FunctionType
                                and fn.__code__ is _watched_code()):
            return fn
        return _watching(self, fn)

    def _watch_callbacks(self, tuner: Any) -> None:
        """Heuristics values, autotune hooks and pruning of ``tuner``: the candidate's code."""
        values = getattr(tuner, "values", None)
        if isinstance(values, dict):
            for key, fn in list(values.items()):
                values[key] = self.candidate_code(fn)
        for attr in ("pre_hook", "post_hook", "early_config_prune", "perf_model",
                     "user_defined_pre_hook", "user_defined_post_hook"):
            fn = getattr(tuner, attr, None)
            if callable(fn):
                setattr(tuner, attr, self.candidate_code(fn))
        for config in getattr(tuner, "configs", None) or ():
            hook = getattr(config, "pre_hook", None)
            if callable(hook):
                config.pre_hook = self.candidate_code(hook)

    def _wrap_leaf(self, original: Callable[..., Any]) -> Callable[..., Any]:
        recorder = self

        @functools.wraps(original)
        def run(fn_self: Any, *args: Any, grid: Any = None, warmup: bool = False, **kwargs: Any):
            if warmup:
                return original(fn_self, *args, grid=grid, warmup=warmup, **kwargs)
            recorder.check_kernel(fn_self)
            check_kernel_arguments(args, kwargs)
            check_constexpr_arguments(fn_self, args, kwargs)
            if recorder.kernels is not None:
                recorder.check_kernel_values(args, kwargs)
            name = getattr(getattr(fn_self, "fn", None), "__name__", "kernel")
            recorder.launches[name] += 1
            if recorder.ghost:
                return None
            launch_grid = checked_grid(recorder.candidate_code(grid))  # with the policy on
            if recorder.interpreted:
                recorder._suspend()  # a kernel ran (the policy's `launched`), ...
                recorder._resume()
                with recorder.watching_all():  # ... watched but for Triton's own copies
                    return original(fn_self, *args, grid=launch_grid, warmup=warmup, **kwargs)
            recorder._suspend()
            try:
                return original(fn_self, *args, grid=launch_grid, warmup=warmup, **kwargs)
            finally:
                recorder._resume()

        return run

    def _wrap_outer(self, original: Callable[..., Any]) -> Callable[..., Any]:
        recorder = self

        @functools.wraps(original)
        def run(fn_self: Any, *args: Any, **kwargs: Any):
            if recorder.kernels is not None:
                # what the tuner runs is a kernel (or another tuner), not an object whose
                # `run` would compute with the policy suspended
                from triton.runtime import autotuner, jit

                kinds = {jit.JITFunction, autotuner.Autotuner, autotuner.Heuristics}
                try:
                    from triton.runtime.interpreter import InterpretedFunction

                    kinds.add(InterpretedFunction)
                except ImportError:  # pragma: no cover - very old triton
                    pass
                if type(fn_self) not in kinds or type(vars(fn_self).get("fn")) not in kinds:
                    raise KernelArgumentError("triton.autotune / triton.heuristics around "
                                              "something that is not a kernel")
            check_kernel_arguments(args, kwargs)
            check_tuner(fn_self)
            recorder._watch_callbacks(fn_self)
            grid = kwargs.get("grid")
            if grid is not None:
                kwargs["grid"] = checked_grid(recorder.candidate_code(grid))
            if recorder.interpreted:
                # the interpreter's tuner benchmarks by wall clock: no torch of its own
                return original(fn_self, *args, **kwargs)
            recorder._suspend()
            try:
                return original(fn_self, *args, **kwargs)
            finally:
                recorder._resume()

        return run


def _watching(recorder: LaunchRecorder | None, fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` wrapped to run with the policy fully active (what ``candidate_code`` gives)."""

    # no functools.wraps: it reads the candidate object's attributes (a `__doc__` property
    # ran there, unwatched)
    def watched(*args: Any, **kwargs: Any) -> Any:
        if recorder is None:
            return fn(*args, **kwargs)
        with recorder.watching_all():
            return fn(*args, **kwargs)

    return watched


@functools.cache
def _watched_code() -> types.CodeType:
    return _watching(None, len).__code__


def _wall_clock_bench(kernel_call: Callable[[], Any], quantiles: Any = None) -> list[float]:
    t0 = time.perf_counter()
    kernel_call()
    ms = (time.perf_counter() - t0) * 1000
    return [ms] * (len(quantiles) if quantiles else 1)
