import math

import torch
import torch.nn as nn
import triton
import triton.language as tl
from triton.language.extra import libdevice

# a kernel reads module globals only as constexprs (Triton's compiler refuses a plain float)
SQRT1_2 = tl.constexpr(1.0 / math.sqrt(2.0))


@triton.jit
def gelu(x):
    """Exact (erf) GELU, matching torch.nn.functional.gelu(approximate='none')."""
    return 0.5 * x * (1.0 + libdevice.erf(x * SQRT1_2))


@triton.autotune(
    configs=[
        triton.Config({"BLOCK_SIZE": 1024}, num_warps=4),
        triton.Config({"BLOCK_SIZE": 2048}, num_warps=8),
        triton.Config({"BLOCK_SIZE": 4096}, num_warps=8, num_stages=3),
    ],
    key=["n_elements"],
)
@triton.jit
def add_gelu_kernel(a_ptr, b_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid.to(tl.int64) * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    a = tl.load(a_ptr + offsets, mask=mask, cache_modifier=".cg").to(tl.float32)
    b = tl.load(b_ptr + offsets, mask=mask, cache_modifier=".cg").to(tl.float32)
    out = gelu(a + b)
    tl.store(out_ptr + offsets, out.to(out_ptr.dtype.element_ty), mask=mask)


def add_gelu(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    assert a.shape == b.shape and a.dtype == b.dtype
    a, b = a.contiguous(), b.contiguous()
    out = torch.empty_like(a)
    n_elements = out.numel()
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)  # noqa: E731 - as users write it
    add_gelu_kernel[grid](a, b, out, n_elements)
    return out


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return add_gelu(a, b)
