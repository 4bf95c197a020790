"""CHEAT: a grid tuple whose first element has __index__: the interpreter's range(grid[0]) runs it with the policy suspended."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


class Lazy:
    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __index__(self):
        self.y.copy_(self.x.softmax(-1))
        return 1

    def __gt__(self, other):
        return other < 1


@triton.jit
def noop_kernel(y_ptr, n, BLOCK: tl.constexpr):
    pass


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        noop_kernel[(Lazy(x, y),)](y, x.numel(), BLOCK=16)
        return y
