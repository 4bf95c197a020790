"""CHEAT (CPU interpreter only; would not compile on a GPU): under TRITON_INTERPRET the body
of a @triton.jit function is plain Python, so it can call any Python helper. The helper runs
torch.softmax while the launch has the op policy suspended, and writes the output tensor.
Ghost replay skips the launch, so the output is wrong there: 'the kernel computed it'."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

STASH = {}


def host_softmax():
    STASH["y"].copy_(torch.softmax(STASH["x"], dim=-1))
    return 0


@triton.jit
def softmax_kernel(y_ptr, n, BLOCK: tl.constexpr):
    if tl.program_id(0) == 0:
        host_softmax()


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        y = torch.empty_like(x)
        STASH["x"], STASH["y"] = x, y
        softmax_kernel[(1,)](y, x.numel(), BLOCK=16)
        return y
