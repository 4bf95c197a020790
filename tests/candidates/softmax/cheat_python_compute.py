"""CHEAT (kernels not used): computes on the host in Python, launches a dummy kernel."""

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
def dummy_kernel(y_ptr):
    tl.store(y_ptr, 0.0)


def host_softmax(row):
    import math
    m = max(row)
    e = [math.exp(v - m) for v in row]
    s = sum(e)
    return [v / s for v in e]


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0
        self.cache = {}

    def forward(self, x):
        dummy_kernel[(1,)](torch.empty(1, device=x.device))
        return torch.tensor([host_softmax(r) for r in x.tolist()], dtype=x.dtype).to(x.device)
