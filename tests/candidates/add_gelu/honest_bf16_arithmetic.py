"""Honest bf16 arithmetic in a Triton kernel: `a + b` on the two bf16 loads, rounded to bf16
like eager's `a + b`, then the GELU in fp32. Right on a GPU; Triton 3.9's CPU interpreter
added the raw 16-bit patterns as integers (NaN garbage, rejected as `unwritten_output`)
until interpreter_bf16 made it compute bf16 in fp32 and round as the GPU does. Must be
accepted."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def add_gelu_kernel(a_ptr, b_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    a = tl.load(a_ptr + offsets, mask=mask, other=0.0)
    b = tl.load(b_ptr + offsets, mask=mask, other=0.0)
    x = a + b  # bf16 add, rounded like eager's a + b
    xf = x.to(tl.float32)
    y = 0.5 * xf * (1.0 + tl.erf(xf * 0.7071067811865476))
    tl.store(out_ptr + offsets, y.to(tl.bfloat16), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        a = a.contiguous()
        b = b.contiguous()
        out = torch.empty_like(a)
        n = a.numel()
        add_gelu_kernel[(triton.cdiv(n, 1024),)](a, b, out, n, BLOCK_SIZE=1024)
        return out
