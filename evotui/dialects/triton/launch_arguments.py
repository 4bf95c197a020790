"""What a Triton launch may be given: kernel arguments of plain types, a grid of ints, an
autotuner's names and configs of plain values. Triton inspects each of them while the launch
runs (``hasattr(arg, "dtype")``, hashing a config, ``__index__`` on a grid entry), so an
object of another type would run the candidate's code unwatched. Raised as
``KernelArgumentError``; used by the launch hooks (launch_hooks.LaunchRecorder).
"""

from __future__ import annotations

import enum
import functools
from typing import Any


class KernelArgumentError(TypeError):
    """A kernel argument of a type Triton would inspect by running its code."""


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


def checked_grid(grid: Any) -> Any:
    """``grid`` checked (``check_grid``); a grid callable, its result on each call."""
    if grid is None:
        return grid
    if not callable(grid):
        return check_grid(grid)

    def checked(*args: Any, **kwargs: Any) -> Any:  # (no functools.wraps: it reads `grid`)
        return check_grid(grid(*args, **kwargs))

    return checked
