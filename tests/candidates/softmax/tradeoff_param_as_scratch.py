"""TRADE-OFF (honest, rejected): the per-row max and sum go through a scratch tensor the model
holds as an nn.Parameter (requires_grad=False); rewritten every call, it carries nothing from
one call to the next. Parameters are compared between timed calls (a weight's low bits can
hold a counter), so this is `modified_inputs`, with a message that names
the parameter and says to use a buffer (register_buffer) or per-call scratch instead."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def row_stats(x_ptr, s_ptr, n_cols, stride_x, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride_x + cols, mask=cols < n_cols, other=-float("inf"))
    m = tl.max(x, axis=0)
    tl.store(s_ptr + 2 * row, m)
    tl.store(s_ptr + 2 * row + 1, tl.sum(tl.exp(x - m), axis=0))


@triton.jit
def normalise(x_ptr, s_ptr, y_ptr, n_cols, stride_x, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0)
    m = tl.load(s_ptr + 2 * row)
    s = tl.load(s_ptr + 2 * row + 1)
    tl.store(y_ptr + row * n_cols + cols, tl.exp(x - m) / s, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.scratch = nn.Parameter(torch.zeros(2 * 4096), requires_grad=False)

    def forward(self, x):
        x = x.contiguous()
        rows, cols = x.shape
        y = torch.empty_like(x)
        block = triton.next_power_of_2(cols)
        row_stats[(rows,)](x, self.scratch, cols, x.stride(0), BLOCK=block)
        normalise[(rows,)](x, self.scratch, y, cols, x.stride(0), BLOCK=block)
        return y
