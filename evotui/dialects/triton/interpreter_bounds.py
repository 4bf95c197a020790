"""Bounds on what a kernel may touch under Triton's CPU interpreter.

There a pointer is a host address and a load or store is a raw memory access in the worker
process: a kernel could read or rewrite any Python object (a candidate rewrote the
interned name the op policy looked up, so ``torch.softmax`` passed as an allowed cast).
On a GPU a pointer reaches device memory only. Here every active lane of a load, store or
atomic must fall inside the storage of one of the launch's tensor arguments (what the
interpreter copies in and out, descriptors' bases included); anything else stops the launch.
"""

from __future__ import annotations

from typing import Any

OUTSIDE = "a Triton kernel accessed memory outside the tensors passed to its launch"


class OutOfBoundsAccess(RuntimeError):
    reason = "out_of_bounds"  # the verdict's name (evotui.core.reasons)


def _tensors(value: Any, out: list[Any]) -> None:
    import torch

    if isinstance(value, torch.Tensor):
        out.append(value)
    elif isinstance(value, (tuple, list)):
        for v in value:
            _tensors(v, out)
    elif isinstance(getattr(value, "base", None), torch.Tensor):
        out.append(value.base)  # a tensor descriptor, or a tensor reinterpreted as a dtype


def _ranges(args: list[Any], kwargs: dict[str, Any]) -> list[tuple[int, int]]:
    tensors: list[Any] = []
    for v in [*args, *kwargs.values()]:
        _tensors(v, tensors)
    spans = []
    for t in tensors:
        storage = t.untyped_storage()
        spans.append((storage.data_ptr(), storage.data_ptr() + storage.nbytes()))
    return spans


def check(ptrs: Any, mask: Any, spans: list[tuple[int, int]] | None) -> None:
    """Raise unless every address of ``ptrs`` where ``mask`` holds (an element of the
    pointers' element type) lies in one of ``spans``."""
    import numpy as np
    from triton.runtime import interpreter as interp

    addr = np.asarray(ptrs.data).astype(np.uint64)
    if mask is not None:
        addr = addr[np.broadcast_to(np.asarray(mask.data, dtype=bool), addr.shape)]
    addr = addr.ravel()
    if addr.size == 0:
        return
    size = np.dtype(interp._get_np_dtype(ptrs.get_element_ty())).itemsize
    inside = np.zeros(addr.shape, dtype=bool)
    for start, end in spans or ():
        inside |= (addr >= start) & (addr + size <= end)
    if not inside.all():
        raise OutOfBoundsAccess(OUTSIDE)


def apply_bounds() -> bool:
    """Patch the interpreter (once); False where it lacks the expected hooks."""
    from triton.runtime import interpreter as interp

    builder = interp.__dict__.get("InterpreterBuilder")
    executor = interp.__dict__.get("GridExecutor")
    names = ("create_masked_load", "create_masked_store", "create_atomic_cas", "create_atomic_rmw")
    if builder is None or executor is None or not all(hasattr(builder, n) for n in names) \
            or not hasattr(executor, "_init_args_hst"):
        return False
    if getattr(executor._init_args_hst, "evotui_patched", False):
        return True
    state: dict[str, list[tuple[int, int]] | None] = {"spans": None}
    init_args = executor._init_args_hst

    def init_args_hst(self, args_dev, kwargs):
        args_hst, kwargs_hst = init_args(self, args_dev, kwargs)
        state["spans"] = _ranges(args_hst, kwargs_hst)
        return args_hst, kwargs_hst

    load, store = builder.create_masked_load, builder.create_masked_store
    cas, rmw = builder.create_atomic_cas, builder.create_atomic_rmw

    def masked_load(self, ptrs, mask, other, cache_policy, is_volatile):
        check(ptrs, mask, state["spans"])
        return load(self, ptrs, mask, other, cache_policy, is_volatile)

    def masked_store(self, ptrs, value, mask, cache_policy):
        check(ptrs, mask, state["spans"])
        return store(self, ptrs, value, mask, cache_policy)

    def atomic_cas(self, ptr, cmp, val, sem, scope):
        check(ptr, None, state["spans"])
        return cas(self, ptr, cmp, val, sem, scope)

    def atomic_rmw(self, rmw_op, ptr, val, mask, sem, scope):
        check(ptr, mask, state["spans"])
        return rmw(self, rmw_op, ptr, val, mask, sem, scope)

    init_args_hst.evotui_patched = True
    executor._init_args_hst = init_args_hst
    builder.create_masked_load, builder.create_masked_store = masked_load, masked_store
    builder.create_atomic_cas, builder.create_atomic_rmw = atomic_cas, atomic_rmw
    return True
