"""RMSNorm over fp16 rows as Unsloth's kernels set up mixed precision: the `custom_fwd`
decorator picked by torch version (`torch.amp.custom_fwd(device_type="cuda")` on 2.4+,
`torch.cuda.amp.custom_fwd` before), a `warnings.warn` for inputs it was not tuned for, and
the kernel's rsqrt through `from triton.language.extra import libdevice`."""

import warnings

import torch
import torch.nn as nn
import triton
import triton.language as tl
from triton.language.extra import libdevice

TORCH_VERSION = tuple(int(part) for part in torch.__version__.split("+")[0].split(".")[:2])
if TORCH_VERSION < (2, 4):
    torch_amp_custom_fwd = torch.cuda.amp.custom_fwd
    torch_amp_custom_bwd = torch.cuda.amp.custom_bwd
else:
    torch_amp_custom_fwd = torch.amp.custom_fwd(device_type="cuda")
    torch_amp_custom_bwd = torch.amp.custom_bwd(device_type="cuda")


@triton.jit
def _rms_layernorm_forward(Y, Y_row_stride, X, X_row_stride, W, r, n_cols, eps,
                           BLOCK_SIZE: tl.constexpr):
    row_idx = tl.program_id(0)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    X_row = tl.load(X + row_idx * X_row_stride + col_offsets, mask=mask, other=0).to(tl.float32)
    W_row = tl.load(W + col_offsets, mask=mask, other=0)
    row_var = tl.sum(X_row * X_row, axis=0) / n_cols
    inv_var = libdevice.rsqrt(row_var + eps)
    tl.store(r + row_idx, inv_var)
    normed = (X_row * inv_var).to(W_row.dtype)
    output = normed * W_row
    tl.store(Y + row_idx * Y_row_stride + col_offsets, output, mask=mask)


class Fast_RMS_Layernorm(torch.autograd.Function):
    @staticmethod
    @torch_amp_custom_fwd
    def forward(ctx, X: torch.Tensor, W: torch.Tensor, eps: float):
        if X.dtype not in (torch.float16, torch.bfloat16):
            warnings.warn(f"fast RMS layernorm is tuned for half precision, got {X.dtype}", stacklevel=2)
        shape = X.shape
        dim = shape[-1]
        X = X.reshape(-1, dim)
        n_rows, n_cols = X.shape
        BLOCK_SIZE = triton.next_power_of_2(n_cols)
        num_warps = 8 if BLOCK_SIZE >= 2048 else 4
        Y = torch.empty((n_rows, n_cols), dtype=X.dtype, device=X.device)
        r = torch.empty(n_rows, dtype=torch.float32, device=X.device)
        _rms_layernorm_forward[(n_rows,)](Y, Y.stride(0), X, X.stride(0), W, r, n_cols, eps,
                                          BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)
        ctx.eps = eps
        ctx.save_for_backward(X, W, r)
        return Y.view(*shape)


class ModelNew(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.normal(1.0, 0.1, size=(num_features,), dtype=torch.float16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return Fast_RMS_Layernorm.apply(x.contiguous(), self.weight, self.eps)
