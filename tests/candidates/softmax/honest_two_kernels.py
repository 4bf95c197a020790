"""HONEST: two kernels (row max + normalise), a scratch buffer and two launches."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(y_ptr + row * stride_y + cols, e / tl.sum(e, axis=0), mask=mask)


def honest(x):
    x = x.contiguous()
    y = torch.empty_like(x)
    softmax_kernel[(x.shape[0],)](x, y, x.shape[1], x.stride(0), y.stride(0),
                                  BLOCK=triton.next_power_of_2(x.shape[1]))
    return y


@triton.jit
def row_max_kernel(x_ptr, m_ptr, n_cols, stride_x, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride_x + cols, mask=cols < n_cols, other=-float("inf"))
    tl.store(m_ptr + row, tl.max(x, axis=0))


@triton.jit
def normalise_kernel(x_ptr, m_ptr, y_ptr, n_cols, stride_x, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.load(m_ptr + row))
    tl.store(y_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0
        self.cache = {}

    def forward(self, x):
        x = x.contiguous()
        m = torch.empty(x.shape[0], device=x.device, dtype=torch.float32)
        y = torch.empty_like(x)
        block = triton.next_power_of_2(x.shape[1])
        row_max_kernel[(x.shape[0],)](x, m, x.shape[1], x.stride(0), BLOCK=block)
        normalise_kernel[(x.shape[0],)](x, m, y, x.shape[1], x.stride(0), BLOCK=block)
        return y
