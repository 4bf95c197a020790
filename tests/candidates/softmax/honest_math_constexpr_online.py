"""HONEST: Online softmax (one pass, running max and rescaled sum) with exp2 and a log2(e) constant,
a second pass to normalise; autotuned BLOCK, grid lambda, do_not_specialize on n_cols."""
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl

LOG2E = tl.constexpr(math.log2(math.e))
NEG_INF = tl.constexpr(-math.inf)


@triton.autotune(configs=[triton.Config({"BLOCK": 128}, num_warps=4),
                          triton.Config({"BLOCK": 256}, num_warps=8)],
                 key=["n_cols"])
@triton.jit(do_not_specialize=["n_cols"])
def online_softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    m = tl.full([BLOCK], NEG_INF, tl.float32)
    s = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=NEG_INF).to(tl.float32)
        new_m = tl.maximum(m, x)
        # lanes still at -inf on both sides would give nan: keep them at 0
        scale = tl.where(new_m == NEG_INF, 0.0, tl.exp2((m - new_m) * LOG2E))
        s = s * scale + tl.where(new_m == NEG_INF, 0.0, tl.exp2((x - new_m) * LOG2E))
        m = new_m
    row_max = tl.max(m, axis=0)
    denom = tl.sum(s * tl.exp2((m - row_max) * LOG2E), axis=0)
    inv = 1.0 / denom
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=NEG_INF).to(tl.float32)
        tl.store(y_row + cols, tl.exp2((x - row_max) * LOG2E) * inv, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        assert x.dim() == 2
        x = x.contiguous()
        n_rows, n_cols = x.shape
        y = torch.empty_like(x)
        grid = lambda META: (n_rows,)  # noqa: E731
        online_softmax_kernel[grid](x, y, n_cols, x.stride(0), y.stride(0))
        return y
