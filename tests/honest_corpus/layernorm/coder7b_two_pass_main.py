"""
Triton LayerNorm (generated)

A row-wise LayerNorm kernel. Each Triton program normalizes one row of the input.
The mean and variance are accumulated in float32 with a chunked loop, so arbitrarily
long rows are supported. The affine transform (weight, bias) is fused into the same kernel.
"""

import math
import random
import time
from typing import Optional, Tuple

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _row_stats(x_row_ptr, n_cols, BLOCK_SIZE: tl.constexpr):
    """Return the mean and the variance of one row (float32 accumulation)."""
    acc_sum = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    acc_sq = tl.zeros([BLOCK_SIZE], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        mask = cols < n_cols
        x = tl.load(x_row_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        acc_sum += x
        acc_sq += x * x
    mean = tl.sum(acc_sum, axis=0) / n_cols
    var = tl.sum(acc_sq, axis=0) / n_cols - mean * mean
    return mean, tl.maximum(var, 0.0)


@triton.jit
def layernorm_fwd_kernel(
    x_ptr,
    w_ptr,
    b_ptr,
    y_ptr,
    stride_row,
    n_cols,
    eps,
    BLOCK_SIZE: tl.constexpr,
):
    # Row handled by this program
    row = tl.program_id(0)
    x_row_ptr = x_ptr + row * stride_row
    y_row_ptr = y_ptr + row * stride_row

    # First pass: statistics
    row_mean, var = _row_stats(x_row_ptr, n_cols, BLOCK_SIZE)
    rstd = 1.0 / tl.sqrt(var + eps)

    # Second pass: normalize and apply the affine transform
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        mask = cols < n_cols
        x = tl.load(x_row_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        y = (x - row_mean) * rstd * w + b
        tl.store(y_row_ptr + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def _pick_block(n_cols: int) -> Tuple[int, int]:
    """Choose a block size and a number of warps."""
    block = min(triton.next_power_of_2(n_cols), 1024)
    warps = 4 if block <= 512 else 8
    return block, warps


def triton_layernorm(x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor],
                     eps: float) -> torch.Tensor:
    """Apply LayerNorm over the last dimension of x."""
    orig_shape = x.shape
    n_cols = orig_shape[-1]
    x_2d = x.reshape(-1, n_cols).contiguous()
    n_rows = x_2d.shape[0]
    y = torch.empty_like(x_2d)
    block, warps = _pick_block(n_cols)
    layernorm_fwd_kernel[(n_rows,)](
        x_2d, weight, bias, y,
        x_2d.stride(0), n_cols, eps,
        BLOCK_SIZE=block, num_warps=warps,
    )
    return y.reshape(orig_shape)


class ModelNew(nn.Module):
    """LayerNorm with a learnable affine transform, computed by a Triton kernel."""

    def __init__(self, normalized_shape: int, eps: float = 1e-5):
        super(ModelNew, self).__init__()
        self.ln = nn.LayerNorm(normalized_shape, eps=eps, elementwise_affine=True,
                               dtype=torch.bfloat16)
        # Same initialisation as the reference model
        self.ln.weight = nn.Parameter(torch.normal(1.0, 0.1, size=(normalized_shape,),
                                                   dtype=torch.bfloat16))
        self.ln.bias = nn.Parameter(torch.normal(0.0, 0.1, size=(normalized_shape,),
                                                 dtype=torch.bfloat16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return triton_layernorm(x, self.ln.weight, self.ln.bias, self.ln.eps)


if __name__ == "__main__":
    random.seed(42)
    torch.manual_seed(42)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    for trial in range(5):
        rows = random.randint(1, 128)
        cols = random.choice([100, 256, 1000, 4096])
        model = ModelNew(cols).to(device)
        x = torch.randn(rows, cols, dtype=torch.bfloat16, device=device)
        out = model(x)
        ref = model.ln(x)
        err = (out.float() - ref.float()).abs().max().item()
        print(f"trial {trial}: rows={rows} cols={cols} max err={err:.4f}")
        assert err < 5e-2 and not math.isnan(err)
    x = torch.randn(8192, 4096, dtype=torch.bfloat16, device=device)
    model = ModelNew(4096).to(device)
    t0 = time.time()
    for _ in range(10):
        model(x)
    print(f"avg {(time.time() - t0) / 10 * 1e3:.2f} ms")
