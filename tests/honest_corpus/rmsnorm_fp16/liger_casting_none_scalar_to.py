"""RMSNorm over fp16 rows with Liger-Kernel's `casting_mode="none"` path: the kernel casts
its float scalar arguments to the row's dtype (`eps = eps.to(X_row_dtype)`, `offset.to(...)`)
and computes in fp16, as the library does for that mode."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

_CASTING_MODE_NONE: tl.constexpr = tl.constexpr(-1)
_CASTING_MODE_LLAMA: tl.constexpr = tl.constexpr(0)


@triton.jit
def _rms_norm_forward_kernel(Y_ptr, Y_row_stride, X_ptr, X_row_stride, W_ptr, RSTD_ptr, n_cols,
                             eps, offset, casting_mode: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    row_idx = tl.program_id(0).to(tl.int64)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols

    X_row = tl.load(X_ptr + row_idx * X_row_stride + col_offsets, mask=mask, other=0)
    X_row_dtype = X_row.dtype
    W_row = tl.load(W_ptr + col_offsets, mask=mask, other=0)

    if casting_mode == _CASTING_MODE_LLAMA:
        X_row = X_row.to(tl.float32)
    if casting_mode == _CASTING_MODE_NONE:
        eps = eps.to(X_row_dtype)
        offset = offset.to(X_row_dtype)

    mean_square = tl.sum(X_row.to(tl.float32) * X_row.to(tl.float32), axis=0) / n_cols
    rstd = tl.rsqrt(mean_square + eps)
    tl.store(RSTD_ptr + row_idx, rstd)
    X_row = X_row * rstd.to(X_row_dtype)
    Y_row = X_row * (offset + W_row)
    tl.store(Y_ptr + row_idx * Y_row_stride + col_offsets, Y_row.to(X_row_dtype), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.offset = 0.0
        self.weight = nn.Parameter(torch.normal(1.0, 0.1, size=(num_features,), dtype=torch.float16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.shape[-1]
        x2 = x.contiguous().view(-1, n)
        y = torch.empty_like(x2)
        rstd = torch.empty(x2.shape[0], dtype=torch.float32, device=x.device)
        _rms_norm_forward_kernel[(x2.shape[0],)](y, y.stride(0), x2, x2.stride(0), self.weight,
                                                 rstd, n, self.eps, self.offset,
                                                 casting_mode=_CASTING_MODE_NONE,
                                                 BLOCK_SIZE=triton.next_power_of_2(n), num_warps=4)
        return y.view_as(x)
