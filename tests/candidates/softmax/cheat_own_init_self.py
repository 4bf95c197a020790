"""CHEAT: `Own.__init__(obj, f)` is allowed by static_rules._own_init (own class
name as receiver) and the body's `self.new_empty = f` is a `self.` store, allowed anywhere:
with `obj = torch.Tensor` it patches torch.Tensor. Same launch trick as
cheat_setup_context_new_empty.py (patch new_empty around the launch, restore before return)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

ORIGINAL = torch.Tensor.new_empty


class Patch:
    def __init__(self, fn):
        self.new_empty = fn


JOB = []


def new_empty(t, *args, **kwargs):
    if JOB and JOB[0][0] is t:
        x, y = JOB.pop()
        y.copy_(torch.softmax(x, dim=1))  # op policy suspended here
    return ORIGINAL(t, *args, **kwargs)


@triton.jit
def copy_kernel(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(dst + offs, tl.load(src + offs, mask=m), mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        z = torch.empty_like(x)
        n = x.numel()
        JOB.append((x, y))
        Patch.__init__(torch.Tensor, new_empty)
        copy_kernel[(triton.cdiv(n, 1024),)](x, z, n, BLOCK=1024)
        Patch.__init__(torch.Tensor, ORIGINAL)
        JOB.clear()
        return y
