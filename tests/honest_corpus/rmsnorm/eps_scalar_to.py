"""RMSNorm whose kernel casts its float scalar arguments with `.to()` (`eps.to(tl.float32)`,
`scale.to(tl.float32)`): on a GPU a float argument is an fp32 scalar, and kernels ported
from half-precision code cast them explicitly."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rmsnorm_scaled_kernel(x_ptr, w_ptr, y_ptr, stride, n_cols, eps, scale, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    eps32 = eps.to(tl.float32)
    ms = tl.sum(x * x, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(ms + eps32)
    y = x * rstd * w * scale.to(tl.float32)
    tl.store(y_ptr + row * stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.scale = 1.0
        self.weight = nn.Parameter(torch.normal(1.0, 0.1, size=(num_features,), dtype=torch.bfloat16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.shape[-1]
        x2 = x.contiguous().view(-1, n)
        y = torch.empty_like(x2)
        rmsnorm_scaled_kernel[(x2.shape[0],)](x2, self.weight, y, x2.stride(0), n, self.eps,
                                              self.scale, BLOCK=triton.next_power_of_2(n))
        return y.view_as(x)
