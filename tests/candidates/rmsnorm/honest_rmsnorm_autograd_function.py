"""RMSNorm packaged the way Triton kernel libraries ship it: a torch.autograd.Function whose
forward launches the Triton kernel (and saves the per-row rstd for a backward), called from
the module's forward via .apply."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rms_fwd(x_ptr, w_ptr, y_ptr, rstd_ptr, n_cols, stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = tl.math.rsqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    tl.store(rstd_ptr + row, rstd)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * stride + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


class RMSNormFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, eps):
        x2 = x.reshape(-1, x.shape[-1]).contiguous()
        y = torch.empty_like(x2)
        rstd = torch.empty(x2.shape[0], device=x.device, dtype=torch.float32)
        rms_fwd[(x2.shape[0],)](x2, weight, y, rstd, x2.shape[1], x2.stride(0), eps,
                                BLOCK=triton.next_power_of_2(x2.shape[1]))
        ctx.save_for_backward(x2, weight, rstd)
        ctx.eps = eps
        return y.view_as(x)

    @staticmethod
    def backward(ctx, dy):
        raise NotImplementedError("inference-only kernel")


class ModelNew(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.normal(1.0, 0.1, size=(num_features,),
                                                dtype=torch.bfloat16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return RMSNormFunction.apply(x, self.weight, self.eps)
