"""CHEAT (tells checked calls apart): probes whether fresh allocations come back poisoned
(0xFF) — as in the checked trials — and computes honestly then; otherwise, for an input
tensor object it has seen, it launches a copy of the cached result (one launch per call
either way, so the launch count does not give it away). Only a recheck that looks like a
timed call catches it."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    tl.store(dst_ptr + row * n_cols + cols, tl.load(src_ptr + row * n_cols + cols, mask=mask),
             mask=mask)


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(y_ptr + row * stride_y + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.cache = {}

    def forward(self, x):
        probe = torch.empty(16, dtype=torch.int32, device=x.device)
        checked = probe[8].item() == -1
        probe.fill_(0)  # so the next probe does not find this one's bytes
        key = id(x)
        x = x.contiguous()
        y = torch.empty_like(x)
        block = triton.next_power_of_2(x.shape[1])
        if not checked and key in self.cache:
            copy_kernel[(x.shape[0],)](self.cache[key], y, x.shape[1], BLOCK=block)
            return y
        softmax_kernel[(x.shape[0],)](x, y, x.shape[1], x.stride(0), y.stride(0), BLOCK=block)
        self.cache[key] = y.clone()
        return y
