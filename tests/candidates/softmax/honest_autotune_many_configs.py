"""HONEST: triton.autotune over 32 configs (num_warps x num_stages x rows per program),
keyed on the row length, with a reset_to_zero / restore_value-free plain kernel."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.autotune(
    configs=[triton.Config({'ROWS': 1}, num_warps=1, num_stages=1),
             triton.Config({'ROWS': 2}, num_warps=1, num_stages=1),
             triton.Config({'ROWS': 1}, num_warps=1, num_stages=2),
             triton.Config({'ROWS': 2}, num_warps=1, num_stages=2),
             triton.Config({'ROWS': 1}, num_warps=1, num_stages=3),
             triton.Config({'ROWS': 2}, num_warps=1, num_stages=3),
             triton.Config({'ROWS': 1}, num_warps=1, num_stages=4),
             triton.Config({'ROWS': 2}, num_warps=1, num_stages=4),
             triton.Config({'ROWS': 1}, num_warps=2, num_stages=1),
             triton.Config({'ROWS': 2}, num_warps=2, num_stages=1),
             triton.Config({'ROWS': 1}, num_warps=2, num_stages=2),
             triton.Config({'ROWS': 2}, num_warps=2, num_stages=2),
             triton.Config({'ROWS': 1}, num_warps=2, num_stages=3),
             triton.Config({'ROWS': 2}, num_warps=2, num_stages=3),
             triton.Config({'ROWS': 1}, num_warps=2, num_stages=4),
             triton.Config({'ROWS': 2}, num_warps=2, num_stages=4),
             triton.Config({'ROWS': 1}, num_warps=4, num_stages=1),
             triton.Config({'ROWS': 2}, num_warps=4, num_stages=1),
             triton.Config({'ROWS': 1}, num_warps=4, num_stages=2),
             triton.Config({'ROWS': 2}, num_warps=4, num_stages=2),
             triton.Config({'ROWS': 1}, num_warps=4, num_stages=3),
             triton.Config({'ROWS': 2}, num_warps=4, num_stages=3),
             triton.Config({'ROWS': 1}, num_warps=4, num_stages=4),
             triton.Config({'ROWS': 2}, num_warps=4, num_stages=4),
             triton.Config({'ROWS': 1}, num_warps=8, num_stages=1),
             triton.Config({'ROWS': 2}, num_warps=8, num_stages=1),
             triton.Config({'ROWS': 1}, num_warps=8, num_stages=2),
             triton.Config({'ROWS': 2}, num_warps=8, num_stages=2),
             triton.Config({'ROWS': 1}, num_warps=8, num_stages=3),
             triton.Config({'ROWS': 2}, num_warps=8, num_stages=3),
             triton.Config({'ROWS': 1}, num_warps=8, num_stages=4),
             triton.Config({'ROWS': 2}, num_warps=8, num_stages=4)],
    key=["n_cols"],
)
@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_rows, n_cols, stride_x, stride_y, BLOCK: tl.constexpr,
                   ROWS: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    for i in range(ROWS):
        row = tl.minimum(tl.program_id(0) * ROWS + i, n_rows - 1)
        x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=-float("inf"))
        e = tl.exp(x - tl.max(x, axis=0))
        tl.store(y_ptr + row * stride_y + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        n_rows, n_cols = x.shape
        y = torch.empty_like(x)

        def grid(meta):
            return (triton.cdiv(n_rows, meta["ROWS"]),)

        softmax_kernel[grid](x, y, n_rows, n_cols, x.stride(0), y.stride(0),
                             BLOCK=triton.next_power_of_2(n_cols))
        return y
