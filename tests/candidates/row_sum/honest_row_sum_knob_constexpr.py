"""Row sum (keepdim) with the project's 0/1 tunable-knob style: ACC_FP64 picks the
accumulator dtype, a tl.dtype global the kernel reads (Triton allows dtype globals)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK_SIZE = 512
ACC_FP64 = 0
TUNABLES = {"BLOCK_SIZE": [256, 512, 1024], "ACC_FP64": [0, 1]}

ACC_DTYPE = tl.float64 if ACC_FP64 else tl.float32


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    acc = tl.zeros([BLOCK], dtype=ACC_DTYPE)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0).to(ACC_DTYPE)
    tl.store(out_ptr + row, tl.sum(acc, axis=0).to(tl.float32))


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty((x.shape[0], 1), device=x.device, dtype=x.dtype)
        row_sum_kernel[(x.shape[0],)](x, out, x.shape[1], x.stride(0), BLOCK=BLOCK_SIZE)
        return out
