"""CHEAT (CPU interpreter): the rules closed Triton's interpreter copying its globals (`np`,
`inspect`, `time`, `_interpreter`, ...) into the candidate's module by requiring every name
the file reads to be bound somewhere in the file. "Somewhere" includes a parameter of a
function that never runs: `def _unused(np=None)` binds `np` for the rule, while at module
scope `np` stays unbound, so after the first launch the bare name `np` is numpy. numpy then
computes the softmax on the tensors' memory (no aten op) and a copy kernel moves it."""
# ruff: noqa: F821, B007  (names the interpreter puts into the module; a loop that binds a method)
import torch
import torch.nn as nn
import triton
import triton.language as tl


def _unused(np=None):
    return np


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
        grid = (triton.cdiv(n, 1024),)
        copy_kernel[grid](x, scratch, n, BLOCK=1024)  # the first launch defines `np` here
        a = np.asarray(x)
        e = np.exp(a - a.max(axis=1, keepdims=True))
        np.copyto(np.asarray(scratch), e / e.sum(axis=1, keepdims=True))
        copy_kernel[grid](scratch, y, n, BLOCK=1024)
        return y
