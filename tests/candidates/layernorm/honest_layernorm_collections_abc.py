"""LayerNorm (Triton tutorial 05 forward) with modern typing imports."""
from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _layer_norm_fwd_fused(X, Y, W, B, stride, N, eps, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    Y += row * stride
    X += row * stride
    _mean = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        a = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        _mean += a
    mean = tl.sum(_mean, axis=0) / N
    _var = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        x = tl.load(X + cols, mask=cols < N, other=0.).to(tl.float32)
        x = tl.where(cols < N, x - mean, 0.)
        _var += x * x
    var = tl.sum(_var, axis=0) / N
    rstd = 1 / tl.sqrt(var + eps)
    for off in range(0, N, BLOCK_SIZE):
        cols = off + tl.arange(0, BLOCK_SIZE)
        mask = cols < N
        w = tl.load(W + cols, mask=mask).to(tl.float32)
        b = tl.load(B + cols, mask=mask).to(tl.float32)
        x = tl.load(X + cols, mask=mask, other=0.).to(tl.float32)
        x_hat = (x - mean) * rstd
        y = x_hat * w + b
        tl.store(Y + cols, y.to(tl.bfloat16), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, normalized_shape: int | Sequence[int], eps: float = 1e-5):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.ln = nn.LayerNorm(normalized_shape, eps=eps, elementwise_affine=True,
                               dtype=torch.bfloat16)
        self.ln.weight = nn.Parameter(torch.normal(1.0, 0.1, size=self.normalized_shape,
                                                   dtype=torch.bfloat16))
        self.ln.bias = nn.Parameter(torch.normal(0.0, 0.1, size=self.normalized_shape,
                                                 dtype=torch.bfloat16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x_arg = x.reshape(-1, x.shape[-1])
        M, N = x_arg.shape
        y = torch.empty_like(x_arg)
        MAX_FUSED_SIZE = 65536 // x.element_size()
        BLOCK_SIZE = min(MAX_FUSED_SIZE, triton.next_power_of_2(N))
        num_warps = min(max(BLOCK_SIZE // 256, 1), 8)
        _layer_norm_fwd_fused[(M,)](x_arg, y, self.ln.weight, self.ln.bias, x_arg.stride(0), N,
                                    self.eps, BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps,
                                    num_ctas=1)
        return y.view_as(x)
