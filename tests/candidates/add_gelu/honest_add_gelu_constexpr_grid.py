"""Fused add + exact GELU over the flattened tensor. Block size is a module-level
tl.constexpr global read directly by the kernel (the Triton-recommended way to share a
constant), and the host uses the same constant to size the grid."""
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK = tl.constexpr(1024)
INV_SQRT2 = tl.constexpr(1.0 / math.sqrt(2.0))

__all__ = ["ModelNew"]


@triton.jit
def _gelu(x):
    return 0.5 * x * (1.0 + tl.math.erf(x * INV_SQRT2))


@triton.jit
def add_gelu_kernel(a_ptr, b_ptr, y_ptr, n):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, _gelu(a + b).to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        a_flat = a.contiguous().view(-1)
        b_flat = b.contiguous().view(-1)
        y = torch.empty_like(a_flat)
        n = a_flat.numel()
        grid = ((n + BLOCK - 1) // BLOCK,)
        add_gelu_kernel[grid](a_flat, b_flat, y, n, num_warps=4)
        return y.view_as(a)
