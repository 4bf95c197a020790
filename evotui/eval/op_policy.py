"""Which torch operations a candidate's ``forward`` may run itself.

Candidates must do their arithmetic in their own kernels; torch is for allocation, views
and layout. A ``TorchDispatchMode`` sees every aten op the candidate runs (Triton launches
suspend it) and records the ones outside the allowlist: a ``torch_fallback``.
"""

from __future__ import annotations

from typing import Any

from torch.utils._python_dispatch import TorchDispatchMode

ALLOWED_OPS = frozenset({
    # allocation and initialisation
    "empty", "empty_like", "empty_strided", "new_empty", "new_empty_strided", "zeros",
    "zeros_like", "new_zeros", "zero_", "ones", "ones_like", "new_ones", "full", "full_like",
    "new_full", "fill_", "fill", "arange", "scalar_tensor", "lift_fresh", "lift_fresh_copy",
    # views and layout
    "view", "_unsafe_view", "reshape", "as_strided", "t", "transpose", "permute", "expand",
    "unsqueeze", "squeeze", "select", "slice", "split", "split_with_sizes", "chunk", "unbind",
    "narrow", "flatten", "unflatten", "view_as", "alias", "detach", "contiguous", "clone",
    "copy_", "_to_copy", "_reshape_alias", "expand_as", "movedim", "swapaxes", "transpose_",
    "squeeze_", "unsqueeze_", "resize_",
    # metadata queries
    "sym_size", "sym_stride", "sym_numel", "sym_storage_offset", "is_same_size", "dim",
    "_local_scalar_dense", "item", "is_contiguous", "stride", "size", "numel",
})


class OpPolicy(TorchDispatchMode):
    """Active around a candidate's forward; ``suspended`` > 0 while a kernel launches."""

    def __init__(self, extra_allowed: tuple[str, ...] = ()) -> None:
        super().__init__()
        self.allowed = ALLOWED_OPS | {a.removeprefix("aten::") for a in extra_allowed}
        self.suspended = 0
        self.violations: dict[str, int] = {}

    def enter_kernel(self) -> None:
        self.suspended += 1

    def exit_kernel(self) -> None:
        self.suspended -= 1

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None):
        if not self.suspended:
            name = func.overloadpacket.__name__
            if name not in self.allowed:
                self.violations[f"aten::{name}"] = self.violations.get(f"aten::{name}", 0) + 1
        return func(*args, **(kwargs or {}))
