"""Naive Triton add + exact GELU: a flat 1-D grid of BLOCK_SIZE elements per program, the
arithmetic in fp32 with tl.math.erf.
Knobs: BLOCK_SIZE, NUM_WARPS; BLOCKS_PER_PROGRAM blocks per program in a loop, pipelined NUM_STAGES deep."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK_SIZE = 1024
NUM_WARPS = 4
BLOCKS_PER_PROGRAM = 1
NUM_STAGES = 1
TUNABLES = {
    "BLOCK_SIZE": [256, 512, 1024, 2048, 4096, 8192, 16384],
    "NUM_WARPS": [1, 2, 4, 8, 16, 32],
    "BLOCKS_PER_PROGRAM": [1, 2, 4, 8],
    "NUM_STAGES": [1, 2, 3],
}


@triton.jit
def add_gelu_kernel(a_ptr, b_ptr, y_ptr, n_elements, BLOCK: tl.constexpr,
                    BLOCKS: tl.constexpr, STAGES: tl.constexpr):
    for i in tl.range(BLOCKS, num_stages=STAGES):
        start = (tl.program_id(0).to(tl.int64) * BLOCKS + i) * BLOCK
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n_elements
        a = tl.load(a_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        # round the sum to the output dtype first, as eager PyTorch does
        x = (a + b).to(y_ptr.dtype.element_ty).to(tl.float32)
        y = 0.5 * x * (1.0 + tl.math.erf(x * 0.7071067811865476))
        tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        a = a.contiguous()
        b = b.contiguous()
        y = torch.empty_like(a)
        n = a.numel()
        grid = (triton.cdiv(n, BLOCK_SIZE * BLOCKS_PER_PROGRAM),)
        add_gelu_kernel[grid](a, b, y, n, BLOCK=BLOCK_SIZE, BLOCKS=BLOCKS_PER_PROGRAM,
                              STAGES=NUM_STAGES, num_warps=NUM_WARPS)
        return y
