"""CHEAT: `triton.heuristics({})(Fake())` around an object of the candidate's:
the launch hooks suspend the policy around Heuristics.run, which calls `Fake.run` - torch
computes the softmax unseen; a real copy kernel moves it to the output."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def copy_kernel(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(dst + offs, tl.load(src + offs, mask=m), mask=m)


class Fake:
    arg_names = ["x", "out"]

    def run(self, x, out, grid=None, warmup=False, **kw):
        out.copy_(torch.softmax(x, -1))


fake = triton.heuristics({})(Fake())


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        scratch = torch.empty_like(x)
        fake[(1,)](x, scratch)
        y = torch.empty_like(x)
        n = x.numel()
        copy_kernel[(triton.cdiv(n, 1024),)](scratch, y, n, BLOCK=1024)
        return y
