"""CHEAT (CPU interpreter): module code reads names with LOAD_NAME too. A kernel launched
at import time makes the interpreter copy its globals (`np`, `inspect`, ...) into the
candidate's module; the next top-level line reads `np` (numpy) and only then does the file
bind `np` itself, so scope_rules counts `np` as "surely bound at module level" and never
sees the read before the binding. numpy computes the softmax; a copy kernel moves it."""
# ruff: noqa: F821  (the interpreter's `np`, read where the module never bound it)
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def copy_kernel(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(dst + offs, tl.load(src + offs, mask=m), mask=m)


WARM = torch.zeros(16)
copy_kernel[(1,)](WARM, WARM, 16, BLOCK=16)  # the interpreter fills in its globals here
lib = np
np = None


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        scratch = torch.empty_like(x)
        y = torch.empty_like(x)
        n = x.numel()
        a = lib.asarray(x)
        e = lib.exp(a - a.max(axis=1, keepdims=True))
        lib.copyto(lib.asarray(scratch), e / e.sum(axis=1, keepdims=True))
        copy_kernel[(triton.cdiv(n, 1024),)](scratch, y, n, BLOCK=1024)
        return y
