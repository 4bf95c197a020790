"""HONEST: device-side TMA descriptors (tl.make_tensor_descriptor) with the scratch allocator
that Triton requires for them (triton.set_allocator), as in the Triton tutorials."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


def alloc_fn(size: int, alignment: int, stream):
    return torch.empty(size, device="cuda", dtype=torch.int8)


triton.set_allocator(alloc_fn)


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    x_desc = tl.make_tensor_descriptor(x_ptr, shape=[n_rows, n_cols], strides=[n_cols, 1],
                                       block_shape=[1, BLOCK])
    y_desc = tl.make_tensor_descriptor(y_ptr, shape=[n_rows, n_cols], strides=[n_cols, 1],
                                       block_shape=[1, BLOCK])
    x = x_desc.load([row, 0])  # out-of-bounds columns read as 0
    cols = tl.arange(0, BLOCK)[None, :]
    x = tl.where(cols < n_cols, x, -float("inf"))
    x = x - tl.max(x, axis=1)[:, None]
    e = tl.exp(x)
    y_desc.store([row, 0], e / tl.sum(e, axis=1)[:, None])


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        n_rows, n_cols = x.shape
        y = torch.empty_like(x)
        softmax_kernel[(n_rows,)](x, y, n_rows, n_cols, BLOCK=triton.next_power_of_2(n_cols))
        return y
