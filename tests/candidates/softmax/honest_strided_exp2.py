"""HONEST: Softmax that reads any 2-D strides (no .contiguous()), x.stride() unpacking, a
tl.device_assert on the row index, an `if not x.is_cuda:` branch for num_warps, the launch
under torch.no_grad(), a @staticmethod grid helper, tl.exp2 with a math-derived log2(e)."""
import math
from typing import Tuple  # noqa: UP035 - as LLM-written code often has it

import torch
import torch.nn as nn
import triton
import triton.language as tl

RCP_LN2 = tl.constexpr(1.0 / math.log(2.0))


@triton.jit
def strided_softmax_kernel(x_ptr, y_ptr, n_rows, n_cols, sx0, sx1, sy0, sy1,
                           BLOCK: tl.constexpr):
    row = tl.program_id(0)
    tl.device_assert(row < n_rows, "row out of range")
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * sx0 + cols * sx1, mask=mask, other=-float("inf"))
    z = (x - tl.max(x, axis=0)) * RCP_LN2
    e = tl.exp2(z)
    tl.store(y_ptr + row * sy0 + cols * sy1, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    @staticmethod
    def grid(n_rows: int) -> Tuple[int]:  # noqa: UP006
        return (n_rows,)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_rows, n_cols = x.shape
        sx0, sx1 = x.stride()
        y = torch.empty_like(x)
        sy0, sy1 = y.stride()
        if not x.is_cuda:
            warps = 1
        else:
            warps = 8 if n_cols >= 4096 else 4
        with torch.no_grad():
            strided_softmax_kernel[self.grid(n_rows)](x, y, n_rows, n_cols, sx0, sx1, sy0, sy1,
                                                      BLOCK=triton.next_power_of_2(n_cols),
                                                      num_warps=warps)
        return y
