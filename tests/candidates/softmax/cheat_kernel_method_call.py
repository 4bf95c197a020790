"""CHEAT: jit body calls methods of a module-level value (allowed by _check_jit_bodies: root not a module alias)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

STASH = {}


@triton.jit
def softmax_kernel(y_ptr, n, BLOCK: tl.constexpr):
    if tl.program_id(0) == 0:
        STASH["y"].copy_(STASH["x"].softmax(-1))


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        STASH["x"] = x
        STASH["y"] = y
        softmax_kernel[(1,)](y, x.numel(), BLOCK=16)
        return y
