"""fp16 RMSNorm; launch configuration chosen by a cached function returning a NamedTuple,
adjusted with NamedTuple._replace (its public API; the underscore only avoids field clashes)."""
from __future__ import annotations

import functools
from typing import NamedTuple

import torch
import torch.nn as nn
import triton
import triton.language as tl


class LaunchCfg(NamedTuple):
    block: int
    num_warps: int
    rows_per_prog: int


@functools.lru_cache(maxsize=64)
def pick_config(n_cols: int) -> LaunchCfg:
    cfg = LaunchCfg(block=triton.next_power_of_2(n_cols), num_warps=4, rows_per_prog=1)
    if cfg.block >= 4096:
        cfg = cfg._replace(num_warps=8)
    return cfg


@triton.jit
def rmsnorm_fp16_kernel(x_ptr, w_ptr, y_ptr, n_rows, n_cols, stride, eps,
                        BLOCK: tl.constexpr, ROWS: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    for r in range(ROWS):
        row = tl.minimum(tl.program_id(0) * ROWS + r, n_rows - 1)  # tail: last row again
        x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
        inv = tl.math.rsqrt(tl.sum(x * x, axis=0) / n_cols + eps)
        tl.store(y_ptr + row * stride + cols, (x * inv * w).to(tl.float16), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.normal(1.0, 0.1, size=(num_features,),
                                                dtype=torch.float16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n_rows, n_cols = x.shape
        cfg = pick_config(n_cols)
        grid = (triton.cdiv(n_rows, cfg.rows_per_prog),)
        rmsnorm_fp16_kernel[grid](x, self.weight, y, n_rows, n_cols, x.stride(0), self.eps,
                                  BLOCK=cfg.block, ROWS=cfg.rows_per_prog,
                                  num_warps=cfg.num_warps)
        return y
