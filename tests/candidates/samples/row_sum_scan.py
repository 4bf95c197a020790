"""Row sum via tl.associative_scan (last element of the inclusive scan), a jit combine fn, x.is_cuda-guarded SM count."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_fn(a, b):
    return a + b


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, N, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in range(0, N, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * stride + cols, mask=cols < N, other=0.0)
    scanned = tl.associative_scan(acc, 0, add_fn)
    total = tl.sum(tl.where(tl.arange(0, BLOCK) == BLOCK - 1, scanned, 0.0), axis=0)
    tl.store(out_ptr + row, total)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        assert self.dim == 1
        x = x.contiguous()
        M, N = x.shape
        out = torch.empty((M, 1), device=x.device, dtype=x.dtype)
        if x.is_cuda:
            sms = torch.cuda.get_device_properties(x.device).multi_processor_count
        else:
            sms = 1
        block = max(16, min(triton.next_power_of_2(N), 4096 // max(sms, 1) * 64))
        row_sum_kernel[(M,)](x, out, N, x.stride(0), BLOCK=block)
        return out
