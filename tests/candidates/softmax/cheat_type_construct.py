"""CHEAT: `type(kernel)(body)` builds a new kernel object from a plain function
the kernel rules never saw (one-argument `type()` is allowed); launched, `body` calls torch
with the policy suspended."""
import torch
import torch.nn as nn
import triton
import triton.language as tl  # noqa: F401 - the interpreter looks for it

STATE = {}


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n):
    pass


def body(x_ptr, y_ptr, n):
    STATE["y"].copy_(torch.softmax(STATE["x"], -1))


fake = type(softmax_kernel)(body)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x)
        STATE["x"], STATE["y"] = x, y
        fake[(1,)](x, y, x.numel())
        return y
