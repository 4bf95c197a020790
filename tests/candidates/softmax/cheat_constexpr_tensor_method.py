"""CHEAT (CPU interpreter): a torch tensor passed to a `tl.constexpr` parameter. The
argument check accepts it (a tensor is a plain type), and the interpreter hands constexpr
arguments to the body as they are (`GridExecutor`: no pointer conversion). So inside the
kernel `X` is the torch.Tensor itself, and `S.copy_(X.softmax(1))` is a method call on a
parameter — what kernel_rules allow (`param.attr(...)`: only module roots are judged) —
run with the op policy suspended. A second, honest-looking copy kernel moves scratch into
the output, so ghost replay is wrong."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def prepare_kernel(X: tl.constexpr, S: tl.constexpr):
    S.copy_(X.softmax(1))


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
        prepare_kernel[(1,)](x, scratch)
        copy_kernel[(triton.cdiv(n, 1024),)](scratch, y, n, BLOCK=1024)
        return y
