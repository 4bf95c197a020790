"""HONEST: LayerNorm, two passes over the row with tl.static_range over a fixed number of chunks
(NUM_CHUNKS a constexpr computed on the host), a module constexpr built from torch.finfo for
a variance floor, Welford-free mean/var in fp32, rsqrt, and a dtype map to an OUT_DTYPE arg."""
from typing import Dict  # noqa: UP035 - as LLM-written code often has it

import torch
import torch.nn as nn
import triton
import triton.language as tl

VAR_FLOOR = tl.constexpr(torch.finfo(torch.float32).tiny)
TL_DTYPES: Dict[torch.dtype, tl.dtype] = {  # noqa: UP006
    torch.bfloat16: tl.bfloat16, torch.float16: tl.float16, torch.float32: tl.float32}


@triton.jit
def ln_chunks_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, stride, eps, BLOCK: tl.constexpr,
                     NUM_CHUNKS: tl.constexpr, OUT_DTYPE: tl.constexpr):
    row = tl.program_id(0)
    x_row = x_ptr + row * stride
    total = tl.zeros([BLOCK], dtype=tl.float32)
    for c in tl.static_range(NUM_CHUNKS):
        cols = c * BLOCK + tl.arange(0, BLOCK)
        total += tl.load(x_row + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    mean = tl.sum(total, axis=0) / n_cols
    sq = tl.zeros([BLOCK], dtype=tl.float32)
    for c in tl.static_range(NUM_CHUNKS):
        cols = c * BLOCK + tl.arange(0, BLOCK)
        mask = cols < n_cols
        d = tl.where(mask, tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32) - mean, 0.0)
        sq += d * d
    var = tl.maximum(tl.sum(sq, axis=0) / n_cols, VAR_FLOOR)
    rstd = tl.math.rsqrt(var + eps)
    for c in tl.static_range(NUM_CHUNKS):
        cols = c * BLOCK + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_ptr + row * stride + cols, ((x - mean) * rstd * w + b).to(OUT_DTYPE), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, normalized_shape: int, eps: float = 1e-5):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape, eps=eps, elementwise_affine=True,
                               dtype=torch.bfloat16)
        self.ln.weight = nn.Parameter(torch.normal(1.0, 0.1, size=(normalized_shape,),
                                                   dtype=torch.bfloat16))
        self.ln.bias = nn.Parameter(torch.normal(0.0, 0.1, size=(normalized_shape,),
                                                 dtype=torch.bfloat16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x2 = x.flatten(0, -2).contiguous()
        n_rows, n_cols = x2.shape
        y = torch.empty_like(x2)
        block = 256
        ln_chunks_kernel[(n_rows,)](x2, self.ln.weight, self.ln.bias, y, n_cols, x2.stride(0),
                                    self.ln.eps, BLOCK=block, NUM_CHUNKS=triton.cdiv(n_cols, block),
                                    OUT_DTYPE=TL_DTYPES[x.dtype])
        return y.view_as(x)
