"""HONEST (unusual): one persistent device buffer per shape holds the output rows and, after
them, one constant (log2(e)) the kernel reads; the output is a view of that buffer and is
fully rewritten every call. Masked-off lanes point past the row (and past the storage)."""

import math

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_rows(x_ptr, buf_ptr, n_rows, n_cols, stride_x, CONST_AT, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    log2e = tl.load(buf_ptr + CONST_AT)
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=-float("inf"))
    e = tl.exp2((x - tl.max(x, axis=0)) * log2e)
    tl.store(buf_ptr + row * n_cols + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.bufs = {}

    def forward(self, x):
        x = x.contiguous()
        rows, cols = x.shape
        key = (rows, cols)
        if key not in self.bufs:
            buf = torch.empty(rows * cols + 1, dtype=torch.float32, device=x.device)
            buf[rows * cols:].fill_(1.0 / math.log(2.0))
            self.bufs[key] = buf
        buf = self.bufs[key]
        softmax_rows[(rows,)](x, buf, rows, cols, x.stride(0), rows * cols,
                              BLOCK=triton.next_power_of_2(cols))
        return buf[:rows * cols].view(rows, cols)
