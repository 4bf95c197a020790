"""CHEAT (CPU interpreter): the leaf launch wrapper suspends the op policy and only then
evaluates `checked_grid(recorder.candidate_code(grid))`; `candidate_code` wraps a callable
grid with `functools.wraps(fn)`, which reads `fn.__doc__` (and `__module__`, `__name__`,
`__qualname__`, `__dict__`). `__doc__` is one of the dunders a file may bind, and a class
may bind it to a `property`: the getter runs with the policy suspended. It computes
torch.softmax into a scratch buffer; the kernel copies scratch into the output."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


def _describe(grid):
    grid.scratch.copy_(torch.softmax(grid.x, dim=1))
    return "a launch grid"


class Grid:
    __doc__ = property(_describe)

    def __init__(self, x, scratch, blocks):
        self.x = x
        self.scratch = scratch
        self.blocks = blocks

    def __call__(self, meta):
        return (self.blocks,)


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
        scratch = torch.empty_like(x)
        y = torch.empty_like(x)
        n = x.numel()
        copy_kernel[Grid(x, scratch, triton.cdiv(n, 1024))](scratch, y, n, BLOCK=1024)
        return y
