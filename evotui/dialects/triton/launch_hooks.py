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
dtypes, TMA descriptors, tuples of these): Triton inspects every argument during the launch
(``hasattr(arg, "dtype")``), so an ``int`` subclass with a ``dtype`` property would run the
candidate's code unwatched.
"""

from __future__ import annotations

import contextlib
import enum
import functools
import os
import time
import types
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

from evotui.core import reasons


class KernelArgumentError(TypeError):
    """A kernel argument of a type Triton would inspect by running its code."""


class KernelSourceMismatch(KernelArgumentError):
    """Triton read, for a kernel of the candidate's file, other text than the static rules
    checked (another encoding of the file, another ``def`` found by a guess)."""

    reason = reasons.AMBIGUOUS_SOURCE


def same_text(read: str | None, checked: str) -> bool:
    """``read`` (what Triton took for a kernel's source) is the checked def's text, maybe with
    comment or blank lines after it (``inspect`` ends a block after the comments indented as
    its body)."""
    if read == checked:
        return True
    if type(read) is not str or not read.startswith(checked) or not checked.endswith("\n"):
        return False
    return all(not line.strip() or line.lstrip().startswith("#")
               for line in read[len(checked):].splitlines())


@functools.cache
def _plain_types() -> frozenset[type]:
    import torch
    import triton.language as tl

    plain: set[type] = {int, float, bool, str, type(None), torch.Tensor, torch.nn.Parameter,
                        torch.dtype, tl.dtype}
    plain.update(type(d) for d in (tl.float32, tl.bfloat16, tl.int32))  # dtype subclasses
    return frozenset(plain)


@functools.cache
def _tensor_descriptor() -> type | None:
    try:
        from triton.tools.tensor_descriptor import TensorDescriptor
    except ImportError:  # pragma: no cover - triton without TMA descriptors
        return None
    return TensorDescriptor


@functools.cache
def _interpreted_function() -> type | None:
    """What ``@triton.jit`` makes under the CPU interpreter."""
    try:
        from triton.runtime.interpreter import InterpretedFunction
    except ImportError:  # pragma: no cover - very old triton
        return None
    return InterpretedFunction


@functools.cache
def torch_size() -> type:
    import torch

    return torch.Size


def check_kernel_arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """Raise ``KernelArgumentError`` for an argument whose exact type is not a plain one;
    ``type()`` runs no candidate code, unlike ``hasattr`` or ``isinstance`` on a subclass."""
    plain = _plain_types()

    import triton.language as tl
    from triton.runtime.jit import JITFunction, TensorWrapper

    interpreted = _interpreted_function()
    descriptor = _tensor_descriptor()

    def check(value: Any, where: str) -> None:
        kind = type(value)
        if kind in (tuple, list, torch_size()):
            for item in value:
                check(item, where)
        elif kind is tl.constexpr:  # what it wraps is the argument (a lambda would be code)
            if isinstance(value.value, torch_tensor()):
                raise KernelArgumentError(f"kernel argument {where} is a tensor wrapped in "
                                          "tl.constexpr: pass tensors as pointers")
            check(value.value, where)
        elif kind is TensorWrapper:  # triton.reinterpret(x, dtype)
            # the dtype is hashed and printed as the launch specialises
            if type(value.dtype) not in plain or type(value.dtype) in (str, int, float, bool):
                raise KernelArgumentError(f"kernel argument {where}: `triton.reinterpret` to a "
                                          f"`{type(value.dtype).__name__}`, not a dtype")
            check(value.base, where)
        elif kind is descriptor:
            # rebuilt inside the launch, which tests its fields (`if round_f32_to_tf32:`)
            for field, item in vars(value).items():
                check(item, f"{where} (`.{field}`)")
        elif kind is JITFunction or kind is interpreted:
            # a @triton.jit function passed in (`ACTIVATION=gelu`); the static rules allow
            # `triton.jit` only as a decorator, so its body is one they checked
            return
        elif kind not in plain:
            hint = (" (an Enum member: pass its `.value`)"
                    if any(c is enum.Enum for c in kind.__mro__) else "")
            raise KernelArgumentError(
                f"kernel argument {where} is a `{kind.__name__}`{hint}: pass tensors, numbers, "
                "strings, dtypes or TMA descriptors (or tuples of them) to a Triton kernel")

    for i, value in enumerate(args):
        check(value, f"#{i + 1}")
    for name, value in kwargs.items():
        if name not in ("grid", "warmup"):
            check(value, f"`{name}`")


@functools.cache
def torch_tensor() -> type:
    import torch

    return torch.Tensor


def check_constexpr_arguments(kernel: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    """A `tl.constexpr` parameter gets a value, not a tensor: the interpreter hands it to the
    body as the Python object, whose methods (`S.copy_(X.softmax(1))`) then ran with the
    policy suspended."""
    fn = vars(kernel).get("fn")
    params = vars(kernel).get("params")
    if params is not None:  # a JITFunction
        constexprs = {p.name for p in params if getattr(p, "is_constexpr", False)}
    else:
        notes = getattr(fn, "__annotations__", None) or {}
        constexprs = {name for name, note in notes.items()
                      if note is _tl_constexpr() or (type(note) is str
                                                     and note.split(".")[-1] == "constexpr")}
    names = list(vars(kernel).get("arg_names") or [])
    bound = {**dict(zip(names, args, strict=False)), **kwargs}
    for name in constexprs:
        if isinstance(bound.get(name), torch_tensor()):
            raise KernelArgumentError(f"the tl.constexpr parameter `{name}` got a tensor: "
                                      "pass tensors to pointer parameters")


@functools.cache
def _tl_constexpr() -> type:
    import triton.language as tl

    return tl.constexpr


def check_grid(grid: Any) -> Any:
    """A launch grid: exact ints, or a tuple/list of them (Triton's interpreter runs
    ``__index__`` and comparisons on grid entries with the policy suspended). A
    ``torch.Size`` (``kernel[x.shape[:1]]``) and ``tl.constexpr`` ints (a block size kept
    as a module constant) are taken as the ints they hold."""
    import torch
    import triton.language as tl

    if type(grid) is torch.Size:
        grid = tuple(grid)
    if type(grid) in (tuple, list):
        grid = type(grid)(g.value if type(g) is tl.constexpr and type(g.value) is int else g
                          for g in grid)
    elif type(grid) is tl.constexpr and type(grid.value) is int:
        grid = grid.value
    if type(grid) is int or (type(grid) in (tuple, list) and all(type(g) is int for g in grid)):
        return grid
    raise KernelArgumentError(f"the launch grid is {type(grid).__name__} "
                              f"{[type(g).__name__ for g in grid] if type(grid) in (tuple, list) else ''}"
                              ": a grid is a tuple of ints (or a callable returning one)")


def check_tuner(tuner: Any) -> None:
    """What an autotuner or a heuristics wrapper iterates, hashes and calls while the launch
    runs: names are strings (`key=`, `reset_to_zero=`, `restore_value=`,
    heuristics' names), configs are `triton.Config`s of plain values (a duck-typed config's
    `all_kwargs`, or a frozen dataclass value's generated `__hash__` reading a property ran
    unwatched), the containers are exact builtins (a `dict` subclass's `items`)."""
    from triton import Config

    state = vars(tuner)
    names = [*state.get("keys", ()), *state.get("reset_to_zero", ()),
             *state.get("restore_value", ())]
    if "values" in state:
        values = state["values"]
        if type(values) is not dict:
            raise KernelArgumentError(f"triton.heuristics got a `{type(values).__name__}`: "
                                      "pass a plain dict of names to functions")
        names.extend(values)
    odd = [n for n in names if type(n) is not str]
    if odd:
        raise KernelArgumentError(f"an autotune/heuristics argument name is a "
                                  f"`{type(odd[0]).__name__}`: name kernel parameters by strings")
    configs = state.get("configs")
    if configs is None:
        return
    if type(configs) not in (list, tuple):
        raise KernelArgumentError("triton.autotune's configs must be a list of triton.Config")
    for i, config in enumerate(configs):
        if type(config) is not Config:
            raise KernelArgumentError(f"autotune config #{i + 1} is a `{type(config).__name__}`, "
                                      "not a triton.Config")
        fields = dict(vars(config))
        kwargs = fields.pop("kwargs", None)
        fields.pop("pre_hook", None)  # a function: run watched (LaunchRecorder._watch_callbacks)
        if type(kwargs) is not dict or any(type(k) is not str for k in kwargs):
            raise KernelArgumentError(f"autotune config #{i + 1}: its kwargs must be a dict "
                                      "with string keys")
        check_kernel_arguments((), {**kwargs, **{f"config.{k}": v for k, v in fields.items()}})
    prune = state.get("top_k")
    if prune is not None and type(prune) not in (int, float):
        raise KernelArgumentError("prune_configs_by's top_k must be a number")


def _checked_grid(grid: Any) -> Any:
    if grid is None:
        return grid
    if not callable(grid):
        return check_grid(grid)

    def checked(*args: Any, **kwargs: Any) -> Any:  # (no functools.wraps: it reads `grid`)
        return check_grid(grid(*args, **kwargs))

    return checked


# the recorder whose checked texts the hooks on Triton's classes ask (the last installed)
_TEXT_CHECKER: list[LaunchRecorder] = []


class LaunchRecorder:
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
        # file -> the functions the static rules checked as kernels, by first line, with
        # their checked text; None: not checked (no candidate loaded through the worker)
        self.kernels: dict[str, dict[int, Any]] | None = None
        # id(kernel) -> (kernel, its function, the text read) whose text matched
        self._confirmed: dict[int, tuple[Any, Any, Any]] = {}

    def approve(self, filename: str, source: str) -> None:
        """The kernels of a candidate file: its ``@triton.jit`` defs, by first line, and the
        text of each as checked (``source`` must be the very string the static rules parsed
        and the module is compiled from; raises SyntaxError for a file that does not parse)."""
        from evotui.dialects.triton.kernel_defs import kernel_texts

        self.kernels = {**(self.kernels or {}), filename: kernel_texts(source)}

    def _checked(self, fn: Any) -> Any:
        """The checked def (``kernel_defs.KernelText``) that ``fn`` was compiled from."""
        code = fn.__code__ if type(fn) is types.FunctionType else None
        checked = None if code is None or self.kernels is None else \
            self.kernels.get(code.co_filename, {}).get(code.co_firstlineno)
        if checked is None:
            raise KernelArgumentError("the kernel launched runs a function that is not one of "
                                      "the file's @triton.jit defs")
        return checked

    def _ours(self, fn: Any) -> bool:
        """``fn`` comes from a candidate file (not Triton's own library, say)."""
        return (self.kernels is not None and type(fn) is types.FunctionType
                and fn.__code__.co_filename in self.kernels)

    def confirm_text(self, fn: Any, read: str | None) -> None:
        """``read``, the text Triton parses for the kernel ``fn``, must be the text of the
        checked def ``fn`` was compiled from: else KernelSourceMismatch."""
        checked = self._checked(fn)
        if not same_text(read, checked.text):
            raise KernelSourceMismatch(
                f"line {checked.def_line}: the source Triton read for the kernel "
                f"`{fn.__name__}` is not the text that was checked (the file read in another "
                "encoding, or another def taken for it)")

    def _interpreter_text(self, fn: Any) -> str | None:
        """What the interpreter parses for ``fn`` (``rewrite_ast`` below): the lines
        ``inspect`` gives for it, from the checked def's own ``def`` line (never a line found
        by searching), dedented; None where ``inspect`` finds none, or another block."""
        import inspect
        import textwrap

        checked = self._checked(fn)
        try:
            lines, start = inspect.getsourcelines(fn)
        except (OSError, TypeError):
            return None
        if start != fn.__code__.co_firstlineno or not start <= checked.def_line < start + len(lines):
            return None
        return textwrap.dedent("".join(lines[checked.def_line - start:]))

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
        self._checked(fn)
        # the text Triton compiles for it is that def's, as checked: a JITFunction parses its
        # `_src`; the interpreter what `_interpreter_text` gives (each confirmed once)
        state = vars(kernel)
        read = (state["_src"] if "_src" in state else state.get("src")) \
            if type(kernel) is JITFunction else None
        seen = self._confirmed.get(id(kernel))
        if seen is None or seen[0] is not kernel or seen[1] is not fn or seen[2] is not read:
            self.confirm_text(fn, read if type(kernel) is JITFunction else self._interpreter_text(fn))
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
        self._confirm_parsed_text(jit)
        self.interpreted = os.environ.get("TRITON_INTERPRET") == "1"
        if self.interpreted:
            self._interpret_checked_text()
            # The interpreter has no driver to benchmark autotune configs with; a wall-clock
            # benchmarker lets honest autotuned candidates run (the choice is meaningless).
            autotuner.Autotuner.do_bench = property(lambda _self: _wall_clock_bench)
            from evotui.dialects.triton.interpreter_fixes import apply_interpreter_fixes
            from evotui.dialects.triton.interpreter_globals import isolate_kernel_globals

            apply_interpreter_fixes()
            isolate_kernel_globals()
            self._suspend_only_for_copies()
        self._installed = True

    def _confirm_parsed_text(self, jit: Any) -> None:
        """Where Triton parses a kernel's text for the GPU (``JITFunction.parse``: the
        kernel's own, each function it calls, the cache key), that text must be the checked
        def's, for every function of a candidate file."""
        _TEXT_CHECKER[:] = [self]
        owner = next(c for c in jit.JITFunction.__mro__ if "parse" in vars(c))
        original = vars(owner)["parse"]
        if getattr(original, "evotui_checked", False):
            return

        def parse(fn_self: Any) -> Any:
            state = vars(fn_self)
            fn = state.get("fn")
            recorder = _TEXT_CHECKER[0]
            if recorder._ours(fn):
                recorder.confirm_text(fn, state["_src"] if "_src" in state else state.get("src"))
            return original(fn_self)

        parse.evotui_checked = True  # type: ignore[attr-defined]
        owner.parse = parse

    def _interpret_checked_text(self) -> None:
        """The interpreter rewrites a candidate's kernel from the checked def's text:
        Triton's ``rewrite_ast`` took the *last* line starting with ``def `` in what
        ``inspect`` gave (a string in the body held another kernel), and ran the plain
        Python function where ``inspect`` found no source. Here the text is confirmed to be
        the checked def's or the launch fails; Triton's own functions are rewritten as
        before."""
        from triton.runtime import interpreter

        _TEXT_CHECKER[:] = [self]
        rewriter = getattr(interpreter, "FunctionRewriter", None)
        original = getattr(rewriter, "rewrite_ast", None)
        if original is None or getattr(original, "evotui_checked", False):
            return

        def rewrite_ast(rw: Any) -> Any:
            fn = rw.fn
            recorder = _TEXT_CHECKER[0]
            if not recorder._ours(fn):
                return original(rw)
            text = recorder._interpreter_text(fn)
            recorder.confirm_text(fn, text)
            rw.filename, rw.def_file_lineno = fn.__code__.co_filename, recorder._checked(fn).def_line
            return rw._compile_and_exec(rw._transform_ast(text))

        rewrite_ast.evotui_checked = True  # type: ignore[attr-defined]
        rewriter.rewrite_ast = rewrite_ast

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
            checked_grid = _checked_grid(recorder.candidate_code(grid))  # with the policy on
            if recorder.interpreted:
                recorder._suspend()  # a kernel ran (the policy's `launched`), ...
                recorder._resume()
                with recorder.watching_all():  # ... watched but for Triton's own copies
                    return original(fn_self, *args, grid=checked_grid, warmup=warmup, **kwargs)
            recorder._suspend()
            try:
                return original(fn_self, *args, grid=checked_grid, warmup=warmup, **kwargs)
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
                kwargs["grid"] = _checked_grid(recorder.candidate_code(grid))
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
