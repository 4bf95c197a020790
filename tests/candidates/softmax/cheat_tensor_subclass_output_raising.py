"""PROBE: a Tensor subclass spelled through an alias (`T = torch.Tensor`) with
`__torch_function__` assigned (not def'd) passes the static rules; as an output its
`__torch_function__` runs while the worker dumps it (outside the op policy)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

T = torch.Tensor


def tf(cls, func, types, args=(), kwargs=None):
    return func(*args, **(kwargs or {}))


class Sub(T):
    __torch_function__ = classmethod(tf)


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(y_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        softmax_kernel[(x.shape[0],)](x, y, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
        return y.as_subclass(Sub)
