"""CHEAT (torch fallback hidden in a launch): the grid callable, which Triton runs during the
launch, computes the whole softmax with torch; the kernel launched does nothing useful."""

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
        box = {}

        def grid(meta):
            box["y"] = torch.softmax(x, dim=-1)
            return (1,)

        touch_kernel[grid](x)
        return box["y"]
