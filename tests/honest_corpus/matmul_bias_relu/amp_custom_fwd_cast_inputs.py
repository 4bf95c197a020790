"""GEMM + bias + ReLU as an autograd Function under `torch.amp.custom_fwd(device_type="cuda",
cast_inputs=torch.bfloat16)`, with the launch grid from a `functools.partial`-built helper and
the tile sizes in a `typing.NamedTuple`."""

import functools
from typing import NamedTuple

import torch
import torch.nn as nn
import triton
import triton.language as tl


class Tiles(NamedTuple):
    m: int = 32
    n: int = 32
    k: int = 32


TILES = Tiles()


@triton.jit
def _fused_linear_relu(X, W, B, Y, M, N, K, sxm, sxk, swn, swk, sym, syn,
                       BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pid = tl.program_id(0)
    grid_n = tl.cdiv(N, BN)
    pid_m = pid // grid_n
    pid_n = pid % grid_n
    om = pid_m * BM + tl.arange(0, BM)
    on = pid_n * BN + tl.arange(0, BN)
    ok = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        kk = k * BK + ok
        x = tl.load(X + om[:, None] * sxm + kk[None, :] * sxk,
                    mask=(om[:, None] < M) & (kk[None, :] < K), other=0.0)
        w = tl.load(W + on[None, :] * swn + kk[:, None] * swk,
                    mask=(on[None, :] < N) & (kk[:, None] < K), other=0.0)
        acc = tl.dot(x, w, acc)
    acc += tl.load(B + on, mask=on < N, other=0.0).to(tl.float32)[None, :]
    acc = tl.maximum(acc, 0.0)
    tl.store(Y + om[:, None] * sym + on[None, :] * syn, acc.to(Y.dtype.element_ty),
             mask=(om[:, None] < M) & (on[None, :] < N))


def grid_for(m: int, n: int, tiles: Tiles):
    return (triton.cdiv(m, tiles.m) * triton.cdiv(n, tiles.n),)


class FusedLinearReLU(torch.autograd.Function):
    @staticmethod
    @torch.amp.custom_fwd(device_type="cuda", cast_inputs=torch.bfloat16)
    def forward(ctx, x, weight, bias):
        m, k = x.shape
        n = weight.shape[0]
        y = torch.empty((m, n), dtype=x.dtype, device=x.device)
        grid = functools.partial(grid_for, tiles=TILES)(m, n)
        _fused_linear_relu[grid](x, weight, bias, y, m, n, k, x.stride(0), x.stride(1),
                                 weight.stride(0), weight.stride(1), y.stride(0), y.stride(1),
                                 BM=TILES.m, BN=TILES.n, BK=TILES.k)
        ctx.save_for_backward(x, weight, y)
        return y


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=True, dtype=torch.bfloat16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return FusedLinearReLU.apply(x.contiguous(), self.linear.weight, self.linear.bias)
