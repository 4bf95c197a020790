"""
Fused GEMM + Bias + ReLU in Triton

Computes y = relu(x @ W^T + b) with a tiled matrix multiplication. Each program computes a
BLOCK_M x BLOCK_N tile of the output, accumulating in float32 over the K dimension, and
applies the bias and ReLU in the epilogue before writing the result back as bfloat16.
"""

import random
import time

import torch
import torch.nn as nn
import triton
import triton.language as tl

# Tile sizes
BLOCK_M = 32
BLOCK_N = 32
BLOCK_K = 32


@triton.jit
def gemm_bias_relu_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr,
    M, N, K,
    stride_xm, stride_xk,
    stride_wn, stride_wk,
    stride_ym, stride_yn,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    # Program IDs along M and N
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)

    # Offsets for this tile
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)

    # Accumulator in float32
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)

    # Loop over K
    for k0 in range(0, K, BLOCK_K):
        k = k0 + offs_k
        # Load a tile of X: shape (BLOCK_M, BLOCK_K)
        x_tile = tl.load(
            x_ptr + offs_m[:, None] * stride_xm + k[None, :] * stride_xk,
            mask=(offs_m[:, None] < M) & (k[None, :] < K),
            other=0.0,
        )
        # Load a tile of W^T: shape (BLOCK_K, BLOCK_N); W is (N, K)
        w_tile = tl.load(
            w_ptr + offs_n[None, :] * stride_wn + k[:, None] * stride_wk,
            mask=(offs_n[None, :] < N) & (k[:, None] < K),
            other=0.0,
        )
        # Multiply-accumulate
        acc += tl.dot(x_tile, w_tile)

    # Add the bias
    bias = tl.load(b_ptr + offs_n, mask=offs_n < N, other=0.0)
    acc = acc + bias[None, :].to(tl.float32)

    # ReLU
    acc = tl.where(acc > 0, acc, 0.0)

    # Store
    y_ptrs = y_ptr + offs_m[:, None] * stride_ym + offs_n[None, :] * stride_yn
    tl.store(y_ptrs, acc.to(tl.bfloat16), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


@torch.compiler.disable
def gemm_bias_relu(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """Host wrapper for the fused kernel."""
    assert x.dim() == 2 and weight.dim() == 2
    M, K = x.shape
    N = weight.shape[0]
    y = torch.empty((M, N), device=x.device, dtype=x.dtype)
    grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
    gemm_bias_relu_kernel[grid](
        x, weight, bias, y,
        M, N, K,
        x.stride(0), x.stride(1),
        weight.stride(0), weight.stride(1),
        y.stride(0), y.stride(1),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
    )
    return y


class ModelNew(nn.Module):
    """relu(linear(x)) with a fused Triton GEMM."""

    def __init__(self, in_features: int, out_features: int):
        super(ModelNew, self).__init__()
        # Keep an nn.Linear so the parameters match the reference model
        self.linear = nn.Linear(in_features, out_features, bias=True, dtype=torch.bfloat16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        return gemm_bias_relu(x, self.linear.weight, self.linear.bias)


if __name__ == "__main__":
    random.seed(3)
    torch.manual_seed(3)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    for _ in range(3):
        m, k, n = random.choice([16, 64, 100]), random.choice([32, 70]), random.choice([45, 96])
        model = ModelNew(k, n).to(device)
        x = torch.randn(m, k, dtype=torch.bfloat16, device=device)
        ref = torch.relu(model.linear(x))
        out = model(x)
        print(m, k, n, (out.float() - ref.float()).abs().max().item())
    model = ModelNew(4096, 4096).to(device)
    x = torch.randn(4096, 4096, dtype=torch.bfloat16, device=device)
    t0 = time.perf_counter()
    for _ in range(10):
        model(x)
    dt = (time.perf_counter() - t0) / 10
    print(f"{dt * 1e3:.2f} ms, {2 * 4096 ** 3 / dt / 1e12:.2f} TFLOP/s")
