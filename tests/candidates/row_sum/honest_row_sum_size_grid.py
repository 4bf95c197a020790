"""Row sum (keepdim): one program per row; the launch grid is the tensor's leading shape
(`x.shape[:1]`, a torch.Size, which Triton accepts as a grid tuple)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(acc, axis=0))


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = x.new_empty(x.shape[:1])
        row_sum_kernel[x.shape[:1]](x, out, x.shape[1], x.stride(0), BLOCK=256)
        return out.unsqueeze(self.dim)
