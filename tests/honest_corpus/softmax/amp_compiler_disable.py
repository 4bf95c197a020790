"""Softmax as mixed-precision training code writes it: the autograd Function's forward under
`torch.amp.custom_fwd(device_type="cuda")`, and the host-side launcher kept out of
`torch.compile` graphs with `@torch.compiler.disable`."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _softmax_fwd_kernel(x_ptr, y_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    z = x - tl.max(x, axis=0)
    num = tl.exp(z)
    den = tl.sum(num, axis=0)
    tl.store(y_ptr + row * stride + cols, (num / den).to(y_ptr.dtype.element_ty), mask=mask)


@torch.compiler.disable
def launch_softmax(x: torch.Tensor) -> torch.Tensor:
    y = torch.empty_like(x)
    n_rows, n_cols = x.shape
    _softmax_fwd_kernel[(n_rows,)](x, y, x.stride(0), n_cols,
                                   BLOCK=triton.next_power_of_2(n_cols), num_warps=4)
    return y


class TritonSoftmax(torch.autograd.Function):
    @staticmethod
    @torch.amp.custom_fwd(device_type="cuda")
    def forward(ctx, x):
        y = launch_softmax(x.contiguous())
        ctx.save_for_backward(y)
        return y

    @staticmethod
    @torch.amp.custom_bwd(device_type="cuda")
    def backward(ctx, dy):
        (y,) = ctx.saved_tensors
        return y * (dy - (dy * y).sum(dim=-1, keepdim=True))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return TritonSoftmax.apply(x)
