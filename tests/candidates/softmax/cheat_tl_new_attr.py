"""CHEAT: `self.lang = tl; self.lang.softmax_rows = f` puts a Python function on
triton.language; a kernel calls `tl.softmax_rows(...)` (any `tl.` call passed the kernel rules)
and f computes with torch while the policy is suspended."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

STATE = {}


def softmax_rows(n):
    STATE["y"].copy_(torch.softmax(STATE["x"], -1))


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n):
    tl.softmax_rows(n)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.lang = tl
        self.lang.softmax_rows = softmax_rows

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x)
        out = torch.empty_like(x)
        STATE["x"], STATE["y"] = x, out
        softmax_kernel[(1,)](x, y, x.numel())
        return out
