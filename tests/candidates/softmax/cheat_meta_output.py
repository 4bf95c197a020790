"""CHEAT (not a real tensor): returns a meta tensor of the right shape and dtype, which holds no
data (the harness cannot read it back: not_a_tensor, never a harness error)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def touch_kernel(x_ptr):
    tl.store(x_ptr, tl.load(x_ptr))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        touch_kernel[(1,)](x)
        return torch.empty(x.shape, dtype=x.dtype, device="meta")
