"""
RMSNorm with Triton.

This implementation computes RMSNorm (root mean square layer normalization) with a custom
Triton kernel. The computation is done in float32 for numerical stability and the result
is cast back to the input dtype.

Usage:
    model = ModelNew(num_features=4096)
    y = model(x)
"""

import random
import time

import torch
import torch.nn as nn
import triton
import triton.language as tl

# ---------------------------------------------------------------------------
# Helper functions
# ---------------------------------------------------------------------------

def next_power_of_two(n: int) -> int:
    """Compute the next power of two greater than or equal to n."""
    return 1 if n == 0 else 2 ** (n - 1).bit_length()


def choose_num_warps(block_size: int) -> int:
    """Heuristic for the number of warps."""
    if block_size <= 512:
        return 2
    elif block_size <= 2048:
        return 4
    elif block_size <= 8192:
        return 8
    return 16


# ---------------------------------------------------------------------------
# Triton kernel
# ---------------------------------------------------------------------------

@triton.jit
def rms_norm_fwd_kernel(
    X,  # input pointer
    W,  # weight pointer
    Y,  # output pointer
    stride_x,  # row stride of X
    stride_y,  # row stride of Y
    N,  # number of columns
    eps,  # epsilon
    BLOCK_SIZE: tl.constexpr,
):
    # Each program processes one row
    row_id = tl.program_id(0)

    # Pointers to the start of the row
    x_row = X + row_id * stride_x
    y_row = Y + row_id * stride_y

    # Offsets and mask
    offsets = tl.arange(0, BLOCK_SIZE)
    mask = offsets < N

    # Load the input row (cast to float32)
    x = tl.load(x_row + offsets, mask=mask, other=0.0)
    x = x.to(tl.float32)

    # Compute the mean of squares
    sq = x * x
    mean_sq = tl.sum(sq, axis=0) / N

    # Compute reciprocal RMS
    rrms = 1.0 / tl.sqrt(mean_sq + eps)

    # Load weight
    w = tl.load(W + offsets, mask=mask, other=0.0)
    w = w.to(tl.float32)

    # Normalize and scale
    y = x * rrms * w

    # Store the result (cast back to the output dtype)
    tl.store(y_row + offsets, y.to(Y.dtype.element_ty), mask=mask)


# ---------------------------------------------------------------------------
# Python wrapper
# ---------------------------------------------------------------------------

def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    """Apply RMSNorm over the last dimension using Triton."""
    # Make sure the input is contiguous
    if not x.is_contiguous():
        x = x.contiguous()

    # Flatten all leading dimensions
    original_shape = x.shape
    N = original_shape[-1]
    x_2d = x.view(-1, N)
    M = x_2d.shape[0]

    # Output tensor
    y = torch.empty_like(x_2d)

    # Kernel configuration
    BLOCK_SIZE = next_power_of_two(N)
    num_warps = choose_num_warps(BLOCK_SIZE)

    # Launch the kernel
    rms_norm_fwd_kernel[(M,)](
        x_2d,
        weight,
        y,
        x_2d.stride(0),
        y.stride(0),
        N,
        eps,
        BLOCK_SIZE=BLOCK_SIZE,
        num_warps=num_warps,
    )

    return y.view(original_shape)


# ---------------------------------------------------------------------------
# Model
# ---------------------------------------------------------------------------

class ModelNew(nn.Module):
    """RMSNorm model using the Triton kernel."""

    def __init__(self, num_features: int, eps: float = 1e-6):
        super(ModelNew, self).__init__()
        self.num_features = num_features
        self.eps = eps
        # Initialize the weight exactly like the reference model
        self.weight = nn.Parameter(
            torch.normal(1.0, 0.1, size=(num_features,), dtype=torch.bfloat16)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return rms_norm(x, self.weight, self.eps)


# ---------------------------------------------------------------------------
# Testing
# ---------------------------------------------------------------------------

def reference_rms_norm(x, weight, eps):
    xf = x.float()
    inv = torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + eps)
    return (xf * inv * weight.float()).to(x.dtype)


def run_tests():
    random.seed(1234)
    torch.manual_seed(1234)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    for _ in range(10):
        batch = random.randint(1, 256)
        dim = random.choice([64, 128, 300, 512, 1024, 4096])
        model = ModelNew(dim).to(device)
        x = torch.randn(batch, dim, dtype=torch.bfloat16, device=device)
        y = model(x)
        y_ref = reference_rms_norm(x, model.weight, model.eps)
        torch.testing.assert_close(y, y_ref, atol=1e-2, rtol=1e-2)
    print("All tests passed!")


def run_benchmark():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    x = torch.randn(8192, 4096, dtype=torch.bfloat16, device=device)
    model = ModelNew(4096).to(device)
    for _ in range(10):
        model(x)
    if device == "cuda":
        torch.cuda.synchronize()
    start = time.time()
    for _ in range(100):
        model(x)
    if device == "cuda":
        torch.cuda.synchronize()
    elapsed = (time.time() - start) / 100
    print(f"Triton RMSNorm: {elapsed * 1000:.3f} ms")


if __name__ == "__main__":
    run_tests()
    run_benchmark()
