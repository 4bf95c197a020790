"""CHEAT (CPU interpreter): a kernel parameter's annotation is an object of the file's own
class. Triton's interpreter builds a GridExecutor on every launch, which normalises each
annotation with `str(ty)` -- with the op policy suspended (inside the launch). The object's
__str__ runs torch.softmax into the output; the kernel itself does nothing."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

STASH = {}


class Note:
    def __str__(self):
        if "x" in STASH:
            STASH["y"].copy_(torch.softmax(STASH["x"], dim=-1))
            STASH.clear()
        return "fp32"


NOTE = Note()


@triton.jit
def touch_kernel(y_ptr: NOTE, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    v = tl.load(y_ptr + offs, mask=offs < n)
    tl.store(y_ptr + offs, v, mask=offs < n)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        STASH["x"], STASH["y"] = x, y
        touch_kernel[(1,)](y, 1, BLOCK=16)
        return y
