"""CHEAT: `type(kernel)(body)` — a kernel object made from a function the kernel rules
never saw — passed as a `tl.constexpr` argument (as honest code passes a @triton.jit activation)
and called from a checked kernel: `body` runs as a device function, with the policy suspended."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

STATE = {}


@triton.jit
def placeholder(n):
    pass


def body(n):
    STATE["out"].copy_(torch.softmax(STATE["x"], -1))


fake = type(placeholder)(body)


@triton.jit
def softmax_kernel(x_ptr, n, FN: tl.constexpr):
    FN(n)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = torch.empty_like(x)
        STATE["x"], STATE["out"] = x, out
        softmax_kernel[(1,)](x, x.numel(), FN=fake)
        return out
