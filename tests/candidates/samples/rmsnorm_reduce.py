"""RMSNorm with tl.reduce and a jit combine function, tl.static_range, a constexpr-arithmetic block,
and a Python-side print for debugging."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

VERBOSE = False


@triton.jit
def _add_combine(a, b):
    return a + b


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, y_ptr, stride, N, eps, BLOCK: tl.constexpr, UNROLL: tl.constexpr):
    row = tl.program_id(0)
    HALF: tl.constexpr = BLOCK // 2  # noqa: F841 - constexpr arithmetic, kept as written
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for i in tl.static_range(UNROLL):
        cols = i * BLOCK + tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * stride + cols, mask=cols < N, other=0.0).to(tl.float32)
        acc += x * x
    ss = tl.reduce(acc, 0, _add_combine)
    rstd = 1.0 / tl.sqrt(ss / N + eps)
    for i in tl.static_range(UNROLL):
        cols = i * BLOCK + tl.arange(0, BLOCK)
        m = cols < N
        x = tl.load(x_ptr + row * stride + cols, mask=m, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=m, other=0.0).to(tl.float32)
        tl.store(y_ptr + row * stride + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=m)


class ModelNew(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.normal(1.0, 0.1, size=(num_features,), dtype=torch.bfloat16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        M, N = x.shape
        y = torch.empty_like(x)
        block = min(1024, triton.next_power_of_2(N))
        unroll = triton.cdiv(N, block)
        if VERBOSE:
            print(f"rmsnorm M={M} N={N} block={block} unroll={unroll}")
        rmsnorm_kernel[(M,)](x, self.weight, y, x.stride(0), N, self.eps, BLOCK=block, UNROLL=unroll)
        return y
