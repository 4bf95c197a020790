"""HONEST: Row sum read off the last element of tl.cumsum over a per-lane accumulator, a version gate
on triton.__version__, BLOCK from a module constant via tl.constexpr(CHUNK * 2), and an
(M, 1) output from x.new_empty."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

CHUNK = 128
BLOCK = tl.constexpr(CHUNK * 2)
TRITON_MAJOR = int(triton.__version__.split(".")[0])


@triton.jit
def row_sum_cumsum_kernel(x_ptr, out_ptr, n_cols, stride_x, stride_out):
    tl.static_assert(BLOCK % 16 == 0)
    row = tl.program_id(0).to(tl.int64)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride_x + cols, mask=cols < n_cols, other=0.0)
    running = tl.cumsum(acc, axis=0)
    last = tl.arange(0, BLOCK) == BLOCK - 1
    tl.store(out_ptr + row * stride_out, tl.sum(tl.where(last, running, 0.0), axis=0))


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim
        self.warps = 4 if TRITON_MAJOR >= 3 else 8

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        assert self.dim == 1
        assert x.is_contiguous(), "expects a contiguous matrix"
        M, N = x.shape
        out = x.new_empty((M, 1))
        row_sum_cumsum_kernel[(M,)](x, out, N, x.stride(0), out.stride(0), num_warps=self.warps)
        return out
