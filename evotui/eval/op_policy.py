"""Which torch operations a candidate's ``forward`` may run itself.

Candidates must do their arithmetic in their own kernels; torch is for allocation, views
and layout. A ``TorchDispatchMode`` sees every aten op the candidate runs (Triton launches
suspend it) and records the ones outside the allowlist: a ``torch_fallback``. So are scalar reads (``.item()``)
beyond a few, and any after the call's first kernel launch (the host finishing what a kernel
computed).

During checked calls (``poison=True``) the same mode fills every uninitialised allocation
(``empty``, ``empty_like``, …, and what ``resize_`` adds) with ``0xFF`` bytes — NaN in every float dtype — so output
elements a kernel never writes read as NaN (``unwritten_output``), never as whatever the
allocator's block held before (a previous correct result: the stale-memory cheat). This does
not depend on the allocator's internals, and works on the CPU too.
"""

from __future__ import annotations

import threading
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

ALLOWED_OPS = frozenset({
    # allocation and initialisation
    "empty", "empty_like", "empty_strided", "empty_permuted", "new_empty", "new_empty_strided",
    "zeros",
    "zeros_like", "new_zeros", "zero_", "ones", "ones_like", "new_ones", "full", "full_like",
    "new_full", "fill_", "fill", "arange", "scalar_tensor", "lift_fresh", "lift_fresh_copy",
    # views and layout
    "view", "_unsafe_view", "reshape", "as_strided", "t", "transpose", "permute", "expand",
    "unsqueeze", "squeeze", "select", "slice", "split", "split_with_sizes", "chunk", "unbind",
    "narrow", "flatten", "unflatten", "view_as", "alias", "detach", "contiguous", "clone",
    "copy_", "_to_copy", "_reshape_alias", "expand_as", "movedim", "swapaxes", "transpose_",
    "squeeze_", "unsqueeze_", "resize_",
    # data moved, not computed: padding to a tile multiple, joining buffers
    "constant_pad_nd", "cat", "stack",
    # metadata queries
    "sym_size", "sym_stride", "sym_numel", "sym_storage_offset", "is_same_size", "dim",
    "_local_scalar_dense", "item", "is_contiguous", "stride", "size", "numel",
})


PLAIN_TENSOR_TYPES = frozenset({torch.Tensor, torch.nn.Parameter})
MAX_SCALAR_READS = 64  # per call: `.item()` beyond this is host-side computation
# ... and none after the call's first kernel launch: what a kernel computed stays on the device

UNINITIALISED = frozenset({"empty", "empty_like", "empty_strided", "new_empty",
                           "new_empty_strided", "empty_permuted"})
POISON_BYTE = 0xFF
_SAME_WIDTH_INT = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def as_bits(t: torch.Tensor) -> torch.Tensor:
    """``t``'s raw bits as signed integers of the same width (a view: for exact comparisons,
    and for filling with poison: -1 is every byte 0xFF)."""
    return t.detach().view(_SAME_WIDTH_INT[t.element_size()])


def poison(t: torch.Tensor, start: int = 0) -> None:
    """Every byte of ``t``'s storage from ``start`` on to ``POISON_BYTE``."""
    storage = t.untyped_storage()
    if storage.nbytes() > start:
        flat = torch.empty(0, dtype=torch.uint8, device=t.device).set_(storage)
        flat[start:].fill_(POISON_BYTE)


def storages(values: Any) -> set[int]:
    """The storage addresses of the tensors among ``values``."""
    return {v.untyped_storage().data_ptr() for v in values if type(v) in PLAIN_TENSOR_TYPES}


def poison_released(outputs: list[Any], protected: set[int]) -> None:
    """Poison a call's outputs before the harness lets go of them. The caching allocator
    hands a freed block to the next allocation of its size, so without this the next call's
    ``torch.empty`` output would hold an earlier call's answer for nearly the same inputs (the
    timed calls differ by one element): a kernel that checks a few elements of its output
    and skips writing rows that already match would do half the work. Storages in
    ``protected`` (inputs, weights) are never touched."""
    for t in outputs:
        if type(t) in PLAIN_TENSOR_TYPES and t.untyped_storage().data_ptr() not in protected:
            # the output's own elements only: its storage may hold more the candidate keeps
            # (an output viewing part of a persistent buffer with constants beside it)
            try:
                as_bits(t).fill_(-1)  # every byte POISON_BYTE
            except (RuntimeError, KeyError):  # overlapping strides (an expanded view), ...
                pass


class _Entered(threading.local):
    """The policies this thread entered and has not left, innermost last (a dispatch mode
    is per thread: in a Dask worker other threads run beside the candidate's)."""

    def __init__(self) -> None:
        self.policies: list[OpPolicy] = []


_ENTERED = _Entered()


def watch_escapes() -> None:
    """Make the ways around an active policy violations, once per process (the candidate
    worker's ``lockdown``):
    - a tensor printed: torch formats values with dispatch modes off, so ``str(x)``,
      ``repr``, ``format`` and f-strings read every value on the host unseen (a
      whole softmax computed in Python from ``str`` of an int view);
    - the modes switched off (``_disable_current_modes``, reachable through a module
      alias): whatever torch computes inside is not seen;
    - a thread started: the mode is per thread."""
    import _thread
    import threading

    import torch._tensor_str as tensor_str
    import torch.utils._python_dispatch as python_dispatch

    tensor_str._str = _watched(tensor_str._str, "a tensor printed (str, repr or format read "
                               "its values on the host)")
    python_dispatch._disable_current_modes = _watched(
        python_dispatch._disable_current_modes, "the op policy switched off "
        "(_disable_current_modes)")
    # the policy watches one thread: torch run in another, joined before forward returns,
    # was unseen and left no thread behind
    thread_started = "a thread started in forward (the op policy watches only its own)"
    threading.Thread.start = _watched(threading.Thread.start, thread_started)
    _thread.start_new_thread = _watched(_thread.start_new_thread, thread_started)


def _watched(original: Any, violation: str) -> Any:
    if getattr(original, "evotui_watched", False):
        return original

    def watched(*args: Any, **kwargs: Any) -> Any:
        entered = _ENTERED.policies
        if entered and not entered[-1].suspended:
            entered[-1]._violation(violation)
        return original(*args, **kwargs)

    watched.evotui_watched = True  # type: ignore[attr-defined]
    return watched


class OpPolicy(TorchDispatchMode):
    """Active around a candidate's forward; ``suspended`` > 0 while a kernel launches."""

    def __enter__(self) -> OpPolicy:
        _ENTERED.policies.append(self)
        return super().__enter__()

    def __exit__(self, *exc: Any) -> Any:
        if self in _ENTERED.policies:
            _ENTERED.policies.remove(self)
        return super().__exit__(*exc)

    def __init__(self, extra_allowed: tuple[str, ...] = (), poison: bool = False) -> None:
        super().__init__()
        self.allowed = ALLOWED_OPS | {a.removeprefix("aten::") for a in extra_allowed}
        self.poison = poison
        self.suspended = 0
        self.violations: dict[str, int] = {}
        self.scalar_reads = 0
        self.launched = False  # a kernel has run in this call

    def enter_kernel(self) -> None:
        self.suspended += 1
        self.launched = True

    def exit_kernel(self) -> None:
        self.suspended -= 1

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None):
        # from the C++ schema, a new string each time: the packet's __name__ is an interned
        # str a candidate's literal shares, and under Triton's interpreter a kernel can
        # rewrite its bytes (`_softmax` disguised as `_to_copy`)
        name = func._schema.name.partition("::")[2]
        if any(t not in PLAIN_TENSOR_TYPES for t in types):
            # a Tensor subclass's own __torch_dispatch__ would run with this mode popped:
            # whatever it computes, unseen (however the subclass was made: class, type(), ...)
            self._violation("a torch.Tensor subclass")
            raise RuntimeError("torch.Tensor subclasses are not allowed in forward")
        if not self.suspended and name not in self.allowed:
            self._violation(f"aten::{name}")
        elif not self.suspended and name in ("_to_copy", "copy_") and _to_the_host(name, args, kwargs):
            # the answer computed on the host and copied back by a kernel
            self._violation(f"aten::{name} (device to host)")
        elif not self.suspended and name in ("_local_scalar_dense", "item"):
            # a size or a flag, fine; element after element, the answer computed in Python
            self.scalar_reads += 1
            if self.launched:
                # a value read back after a kernel ran: the host finishes the computation
                # (Python adds a kernel's partial sums and `torch.full` makes the output)
                self._violation(f"aten::{name} (a value read on the host after a kernel ran)")
            elif self.scalar_reads == MAX_SCALAR_READS + 1:
                self._violation(f"aten::{name} (more than {MAX_SCALAR_READS} values read "
                                "one by one)")
        # every allocation, also during a launch: the CUDA C harness allocates its buffers
        # with the policy suspended, and Triton's own buffers are harmless to fill
        poisoning = self.poison
        grown = None
        if poisoning and name == "resize_" and args and isinstance(args[0], torch.Tensor):
            grown = args[0].untyped_storage().nbytes()  # what it held before may stay
        out = func(*args, **(kwargs or {}))
        # (inside __torch_dispatch__ the mode is off: poison's own ops are not seen here)
        if poisoning and name in UNINITIALISED and isinstance(out, torch.Tensor):
            poison(out)
        elif grown is not None:
            poison(args[0], start=grown)
        return out

    def _violation(self, op: str) -> None:
        self.violations[op] = self.violations.get(op, 0) + 1


def _to_the_host(name: str, args: Any, kwargs: Any) -> bool:
    """Whether this copy moves a device tensor's values to the CPU."""
    if name == "_to_copy":
        src, target = args[0] if args else None, (kwargs or {}).get("device")
    else:  # copy_(dst, src)
        target, src = (args[0].device if args and isinstance(args[0], torch.Tensor) else None,
                       args[1] if len(args) > 1 else None)
    if not isinstance(src, torch.Tensor) or target is None:
        return False
    return src.device.type != "cpu" and torch.device(target).type == "cpu"
