"""RMSNorm: the kernel's constexpr parameters default to module-level constants (Triton
evaluates argument defaults against the module's globals)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

DEFAULT_BLOCK = 256
DEFAULT_ROWS = 2


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, y_ptr, n_rows, n_cols, stride, eps,
                   BLOCK: tl.constexpr = DEFAULT_BLOCK, ROWS: tl.constexpr = DEFAULT_ROWS):
    for r in tl.static_range(ROWS):
        row = tl.program_id(0) * ROWS + r
        if row < n_rows:
            acc = tl.zeros([BLOCK], dtype=tl.float32)
            for start in range(0, n_cols, BLOCK):
                cols = start + tl.arange(0, BLOCK)
                x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
                acc += x * x
            inv = tl.math.rsqrt(tl.sum(acc, axis=0) / n_cols + eps)
            for start in range(0, n_cols, BLOCK):
                cols = start + tl.arange(0, BLOCK)
                m = cols < n_cols
                x = tl.load(x_ptr + row * stride + cols, mask=m, other=0.0).to(tl.float32)
                w = tl.load(w_ptr + cols, mask=m, other=0.0).to(tl.float32)
                tl.store(y_ptr + row * stride + cols, (x * inv * w).to(tl.bfloat16), mask=m)


class ModelNew(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.normal(1.0, 0.1, size=(num_features,),
                                                dtype=torch.bfloat16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n_rows, n_cols = x.shape
        rmsnorm_kernel[(triton.cdiv(n_rows, DEFAULT_ROWS),)](x, self.weight, y, n_rows, n_cols,
                                                              x.stride(0), self.eps)
        return y
