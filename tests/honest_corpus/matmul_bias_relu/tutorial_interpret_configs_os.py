"""Linear + bias + ReLU in the style of the Triton matmul tutorial, as projects adapt it:
the autotune configs shrink when ``TRITON_INTERPRET`` is set (read with ``os.environ``), the
grid is launched by a small helper, and a ``__main__`` block compares against torch and times
both with ``time.perf_counter``."""

import os
import time

import torch
import torch.nn as nn
import triton
import triton.language as tl


def is_interpreter() -> bool:
    return os.environ.get("TRITON_INTERPRET", "0") == "1"


def get_autotune_config():
    if is_interpreter():
        return [triton.Config({"BLOCK_M": 16, "BLOCK_N": 16, "BLOCK_K": 16}, num_warps=1)]
    return [
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 64}, num_stages=3, num_warps=8),
        triton.Config({"BLOCK_M": 64, "BLOCK_N": 128, "BLOCK_K": 32}, num_stages=4, num_warps=4),
    ]


@triton.autotune(configs=get_autotune_config(), key=["M", "N", "K"])
@triton.jit
def linear_relu_kernel(a_ptr, w_ptr, bias_ptr, c_ptr, M, N, K,
                       stride_am, stride_ak, stride_wn, stride_wk, stride_cm, stride_cn,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_K)):
        k_idx = k * BLOCK_K + offs_k
        a = tl.load(a_ptr + offs_m[:, None] * stride_am + k_idx[None, :] * stride_ak,
                    mask=(offs_m[:, None] < M) & (k_idx[None, :] < K), other=0.0)
        w = tl.load(w_ptr + offs_n[None, :] * stride_wn + k_idx[:, None] * stride_wk,
                    mask=(offs_n[None, :] < N) & (k_idx[:, None] < K), other=0.0)
        acc = tl.dot(a, w, acc)
    bias = tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0).to(tl.float32)
    out = tl.maximum(acc + bias[None, :], 0.0)
    tl.store(c_ptr + offs_m[:, None] * stride_cm + offs_n[None, :] * stride_cn,
             out.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


def linear_relu(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    M, K = x.shape
    N = weight.shape[0]
    out = torch.empty((M, N), device=x.device, dtype=x.dtype)

    def grid(meta):
        return (triton.cdiv(M, meta["BLOCK_M"]), triton.cdiv(N, meta["BLOCK_N"]))

    linear_relu_kernel[grid](x, weight, bias, out, M, N, K, x.stride(0), x.stride(1),
                             weight.stride(0), weight.stride(1), out.stride(0), out.stride(1))
    return out


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=True, dtype=torch.bfloat16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return linear_relu(x.contiguous(), self.linear.weight, self.linear.bias)


def timed(fn, *args, reps: int = 10) -> float:
    fn(*args)
    start = time.perf_counter()
    for _ in range(reps):
        fn(*args)
    return (time.perf_counter() - start) / reps * 1e3


if __name__ == "__main__":
    torch.manual_seed(0)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = ModelNew(1024, 1024).to(device)
    x = torch.randn(512, 1024, device=device, dtype=torch.bfloat16)
    ref = torch.relu(model.linear(x))
    print("max diff", (model(x) - ref).abs().max().item())
    print(f"triton {timed(model, x):.3f} ms, torch {timed(lambda t: torch.relu(model.linear(t)), x):.3f} ms")
