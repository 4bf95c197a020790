"""HONEST: Add + exact GELU, flat 1-D grid over numel, a 1/sqrt(2) constant from math, tl.math.erf,
triton.heuristics for an EVEN (no mask) flag, grid lambda on META."""
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl

INV_SQRT2 = tl.constexpr(1.0 / math.sqrt(2.0))
BLOCK_SIZE = 1024


@triton.heuristics({"EVEN": lambda args: args["n"] % args["BLOCK"] == 0})
@triton.jit
def add_gelu_kernel(a_ptr, b_ptr, y_ptr, n, BLOCK: tl.constexpr, EVEN: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    if EVEN:
        a = tl.load(a_ptr + offs)
        b = tl.load(b_ptr + offs)
    else:
        mask = offs < n
        a = tl.load(a_ptr + offs, mask=mask, other=0.0)
        b = tl.load(b_ptr + offs, mask=mask, other=0.0)
    s = a.to(tl.float32) + b.to(tl.float32)
    s = s.to(tl.bfloat16).to(tl.float32)  # eager rounds a + b to bf16 first
    y = 0.5 * s * (1.0 + tl.math.erf(s * INV_SQRT2))
    if EVEN:
        tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty))
    else:
        tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=offs < n)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        assert a.shape == b.shape and a.is_contiguous() and b.is_contiguous()
        y = torch.empty_like(a)
        n = a.numel()
        add_gelu_kernel[lambda META: (triton.cdiv(n, META["BLOCK"]),)](
            a.view(-1), b.view(-1), y.view(-1), n, BLOCK=BLOCK_SIZE)
        return y
