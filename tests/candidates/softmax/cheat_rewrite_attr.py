"""CHEAT: `self.k = kernel; self.k.rewrite = lambda: body` - an attribute
assignment rooted at `self` was allowed at any depth: the interpreter asks the kernel object
for its rewritten function and gets plain Python that calls torch."""
import torch
import torch.nn as nn
import triton
import triton.language as tl  # noqa: F401 - the interpreter looks for it

STATE = {}


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n):
    pass


def body(x_ptr, y_ptr, n):
    STATE["out"].copy_(torch.softmax(STATE["x"], -1))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.k = softmax_kernel
        self.k.rewrite = lambda: body

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x)
        out = torch.empty_like(x)
        STATE["x"], STATE["out"] = x, out
        softmax_kernel[(1,)](x, y, x.numel())
        return out
