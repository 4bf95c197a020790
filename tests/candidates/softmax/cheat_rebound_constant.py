"""CHEAT: a module-level name bound to a number, then rebound to an object whose operator
runs Python; the kernel reads it as if it were the constant (under the interpreter the
operator would run unwatched)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


class Scale:
    def __rmul__(self, other):
        return other  # stands for Python computing the answer


SCALE = 1.0
SCALE = Scale()


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * stride + cols, e / tl.sum(e, axis=0) * SCALE, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        softmax_kernel[(x.shape[0],)](x, y, x.shape[1], x.stride(0),
                                      BLOCK=triton.next_power_of_2(x.shape[1]))
        return y
