"""Softmax whose kernel is made by calling `triton.jit(fn)` on a plain function, as code
generators and some libraries do (`kernel = triton.jit(_impl)`), with the launcher picking
`num_warps` from the row length."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


def _softmax_rows_impl(X, Y, stride_xm, stride_ym, N, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    offs = tl.arange(0, BLOCK_N)
    mask = offs < N
    x = tl.load(X + pid * stride_xm + offs, mask=mask, other=float("-inf"))
    x = x - tl.max(x, axis=0)
    num = tl.exp(x)
    tl.store(Y + pid * stride_ym + offs, num / tl.sum(num, axis=0), mask=mask)


softmax_rows = triton.jit(_softmax_rows_impl)


def _warps_for(block: int) -> int:
    return 4 if block <= 2048 else 8 if block <= 8192 else 16


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        m, n = x.shape
        y = torch.empty_like(x)
        block = triton.next_power_of_2(n)
        softmax_rows[(m,)](x, y, x.stride(0), y.stride(0), n, BLOCK_N=block,
                           num_warps=_warps_for(block))
        return y
