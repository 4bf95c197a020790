"""Add + exact GELU whose kernel reads a plain int module global (`BLOCK = 1024`) as its block
size: Triton's compiler refuses it on a GPU as it refuses any global that is not a
`tl.constexpr`; the CPU interpreter would run it."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def add_gelu_kernel(a_ptr, b_ptr, y_ptr, n):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = (tl.load(a_ptr + offs, mask=mask, other=0.0)
         + tl.load(b_ptr + offs, mask=mask, other=0.0)).to(tl.float32)
    y = 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476))
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        a, b = a.contiguous(), b.contiguous()
        y = torch.empty_like(a)
        n = a.numel()
        add_gelu_kernel[(triton.cdiv(n, BLOCK),)](a, b, y, n)
        return y
