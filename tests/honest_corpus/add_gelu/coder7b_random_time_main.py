"""
Fused Add + GELU kernel written in Triton.

The reference model computes `F.gelu(a + b)`, which materializes the intermediate sum.
This implementation fuses both operations in a single pass over memory:

    out = gelu(a + b) = 0.5 * (a + b) * (1 + erf((a + b) / sqrt(2)))

The computation is done in float32 and the result is stored in the input dtype.
"""

import math
import random
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

# Block size for the 1D launch grid
BLOCK_SIZE = 1024
# 1 / sqrt(2), used by the exact GELU formula
INV_SQRT_2 = tl.constexpr(1.0 / math.sqrt(2.0))


@triton.jit
def fused_add_gelu_kernel(
    a_ptr,  # pointer to the first input
    b_ptr,  # pointer to the second input
    out_ptr,  # pointer to the output
    n_elements,  # total number of elements
    BLOCK_SIZE: tl.constexpr,  # number of elements each program processes
):
    # Program ID
    pid = tl.program_id(axis=0)

    # Compute the offsets for this program
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)

    # Mask out-of-bounds elements
    mask = offsets < n_elements

    # Load inputs
    a = tl.load(a_ptr + offsets, mask=mask, other=0.0)
    b = tl.load(b_ptr + offsets, mask=mask, other=0.0)

    # Add (in the input dtype, like PyTorch) and upcast to float32
    x = (a + b).to(tl.float32)

    # Exact GELU
    cdf = 0.5 * (1.0 + tl.math.erf(x * INV_SQRT_2))
    y = x * cdf

    # Store (cast back to the output dtype)
    tl.store(out_ptr + offsets, y.to(out_ptr.dtype.element_ty), mask=mask)


def fused_add_gelu(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Compute gelu(a + b) with the fused Triton kernel."""
    assert a.shape == b.shape, "Input shapes must match"
    assert a.dtype == b.dtype, "Input dtypes must match"

    # Ensure contiguous memory layout
    a = a.contiguous()
    b = b.contiguous()

    # Allocate output
    out = torch.empty_like(a)
    n_elements = out.numel()

    # Launch grid
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)
    fused_add_gelu_kernel[grid](a, b, out, n_elements, BLOCK_SIZE=BLOCK_SIZE)
    return out


class ModelNew(nn.Module):
    """Model that performs gelu(a + b) using a fused Triton kernel."""

    def __init__(self):
        super(ModelNew, self).__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return fused_add_gelu(a, b)


# -------------------------------------------------------------------------
# Simple correctness test and benchmark
# -------------------------------------------------------------------------
if __name__ == "__main__":
    random.seed(0)
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"

    model = ModelNew()
    for _ in range(5):
        rows = random.randint(1, 512)
        cols = random.randint(1, 4096)
        a = torch.randn(rows, cols, dtype=torch.bfloat16, device=device)
        b = torch.randn(rows, cols, dtype=torch.bfloat16, device=device)
        out = model(a, b)
        ref = F.gelu(a + b)
        max_err = (out.float() - ref.float()).abs().max().item()
        print(f"shape=({rows}, {cols}) max error: {max_err:.5f}")
        assert max_err < 1e-2

    a = torch.randn(8192, 8192, dtype=torch.bfloat16, device=device)
    b = torch.randn(8192, 8192, dtype=torch.bfloat16, device=device)
    for _ in range(10):
        model(a, b)
    start = time.perf_counter()
    for _ in range(50):
        model(a, b)
    elapsed = (time.perf_counter() - start) / 50
    print(f"Average time: {elapsed * 1000:.3f} ms")
