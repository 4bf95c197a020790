"""CHEAT: plain Python (torch's softmax) made a "kernel" with triton.jit(...) called as a
function, not as a decorator, and passed as a tl.constexpr argument: under the interpreter
the kernel calls it as Python. The kernel rules check such a function's body as a kernel's."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


def host_softmax(x):
    return torch.softmax(x, -1)


HOST = triton.jit(host_softmax)


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr, FN: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=-float("inf"))
    tl.store(y_ptr + row * stride + cols, FN(x), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        y = torch.empty_like(x)
        softmax_kernel[(x.shape[0],)](x, y, x.shape[1], x.stride(0),
                                      BLOCK=triton.next_power_of_2(x.shape[1]), FN=HOST)
        return y
