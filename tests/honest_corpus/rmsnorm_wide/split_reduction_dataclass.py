"""RMSNorm for wide rows in two kernels, as split-reduction code does: the first writes each
row's partial sums of squares per column block into a small fp32 buffer, the second reads
them back, reduces, and normalizes its block. Grid configs as a `dataclasses.dataclass`."""

from dataclasses import dataclass

import torch
import torch.nn as nn
import triton
import triton.language as tl


@dataclass(frozen=True)
class SplitConfig:
    block: int = 512
    num_warps: int = 4

    def splits(self, n: int) -> int:
        return triton.cdiv(n, self.block)


@triton.jit
def partial_sumsq_kernel(X, P, stride, N, SPLITS, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    split = tl.program_id(1)
    cols = split * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(X + row * stride + cols, mask=cols < N, other=0.0).to(tl.float32)
    tl.store(P + row * SPLITS + split, tl.sum(x * x, axis=0))


@triton.jit
def normalize_kernel(X, W, P, Y, stride, N, SPLITS, eps, BLOCK: tl.constexpr,
                     SPLITS_P2: tl.constexpr):
    row = tl.program_id(0)
    split = tl.program_id(1)
    s = tl.arange(0, SPLITS_P2)
    partial = tl.load(P + row * SPLITS + s, mask=s < SPLITS, other=0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(partial, axis=0) / N + eps)
    cols = split * BLOCK + tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(Y + row * stride + cols, (x * rstd * w).to(Y.dtype.element_ty), mask=mask)


CONFIG = SplitConfig()


class ModelNew(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.normal(1.0, 0.1, size=(num_features,), dtype=torch.bfloat16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.shape[-1]
        x2 = x.contiguous().view(-1, n)
        m = x2.shape[0]
        splits = CONFIG.splits(n)
        partial = torch.empty((m, splits), dtype=torch.float32, device=x.device)
        y = torch.empty_like(x2)
        grid = (m, splits)
        partial_sumsq_kernel[grid](x2, partial, x2.stride(0), n, splits, BLOCK=CONFIG.block,
                                   num_warps=CONFIG.num_warps)
        normalize_kernel[grid](x2, self.weight, partial, y, x2.stride(0), n, splits, self.eps,
                               BLOCK=CONFIG.block, SPLITS_P2=triton.next_power_of_2(splits),
                               num_warps=CONFIG.num_warps)
        return y.view_as(x)
