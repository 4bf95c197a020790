"""Naive Triton sum with keepdim over any one dim: x is viewed as (outer, R, inner) and one
program per output element walks the R reduced elements in BLOCK_SIZE chunks (for the
benchmark's dim=1 of a matrix, inner is 1 and each program sums one contiguous row).
Knobs: BLOCK_SIZE, NUM_WARPS, NUM_STAGES (pipelining of the loop), OUTPUTS_PER_PROGRAM."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK_SIZE = 1024
NUM_WARPS = 4
NUM_STAGES = 1
OUTPUTS_PER_PROGRAM = 1
TUNABLES = {
    "BLOCK_SIZE": [256, 512, 1024, 2048, 4096, 8192],
    "NUM_WARPS": [1, 2, 4, 8, 16, 32],
    "NUM_STAGES": [1, 2, 3, 4],
    "OUTPUTS_PER_PROGRAM": [1, 2, 4],
}


@triton.jit
def sum_kernel(x_ptr, y_ptr, n_out, R, inner, BLOCK: tl.constexpr, OUTPUTS: tl.constexpr,
               STAGES: tl.constexpr):
    for j in range(OUTPUTS):
        out = tl.minimum(tl.program_id(0).to(tl.int64) * OUTPUTS + j, n_out - 1)  # tail: repeat
        o = out // inner
        i = out % inner
        base = x_ptr + o * R * inner + i
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in tl.range(0, R, BLOCK, num_stages=STAGES):
            r = start + tl.arange(0, BLOCK)
            acc += tl.load(base + r.to(tl.int64) * inner, mask=r < R, other=0.0).to(tl.float32)
        tl.store(y_ptr + out, tl.sum(acc, axis=0).to(y_ptr.dtype.element_ty))


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
        n_out = outer * inner
        grid = (triton.cdiv(n_out, OUTPUTS_PER_PROGRAM),)
        sum_kernel[grid](x, y, n_out, r, inner, BLOCK=BLOCK_SIZE, OUTPUTS=OUTPUTS_PER_PROGRAM,
                         STAGES=NUM_STAGES, num_warps=NUM_WARPS)
        return y
