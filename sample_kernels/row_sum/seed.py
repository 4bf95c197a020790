"""Naive Triton sum with keepdim over any one dim: x is viewed as (outer, R, inner) and one
program per output element walks the R reduced elements in BLOCK_SIZE chunks (for the
benchmark's dim=1 of a matrix, inner is 1 and each program sums one contiguous row)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK_SIZE = 1024
NUM_WARPS = 4
TUNABLES = {
    "BLOCK_SIZE": [256, 512, 1024, 2048, 4096, 8192],
    "NUM_WARPS": [1, 2, 4, 8, 16, 32],
}


@triton.jit
def sum_kernel(x_ptr, y_ptr, R, inner, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    o = pid // inner
    i = pid % inner
    base = x_ptr + o * R * inner + i
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, R, BLOCK):
        r = start + tl.arange(0, BLOCK)
        acc += tl.load(base + r.to(tl.int64) * inner, mask=r < R, other=0.0).to(tl.float32)
    tl.store(y_ptr + pid, tl.sum(acc, axis=0).to(y_ptr.dtype.element_ty))


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        d = self.dim % x.dim()
        outer = 1
        for s in x.shape[:d]:
            outer *= s
        inner = 1
        for s in x.shape[d + 1:]:
            inner *= s
        r = x.shape[d]
        out_shape = list(x.shape)
        out_shape[d] = 1
        y = torch.empty(out_shape, dtype=x.dtype, device=x.device)
        sum_kernel[(outer * inner,)](x, y, r, inner, BLOCK=BLOCK_SIZE, num_warps=NUM_WARPS)
        return y
