"""HONEST: Add + GELU with the activation a @triton.jit function passed as a tl.constexpr argument,
chosen through a plain Enum's .value, a noinline helper, and a 2-D grid over rows and
column blocks with x.stride() unpacking."""
import enum
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl

SQRT1_2 = tl.constexpr(math.sqrt(0.5))


@triton.jit
def gelu_erf(x):
    return 0.5 * x * (1.0 + tl.math.erf(x * SQRT1_2))


@triton.jit
def relu(x):
    return tl.maximum(x, 0.0)


@triton.jit(noinline=True)
def add_rounded(a, b):
    # eager PyTorch rounds a + b to the input dtype before the activation
    return (a.to(tl.float32) + b.to(tl.float32)).to(a.dtype).to(tl.float32)


@triton.jit
def add_act_2d_kernel(a_ptr, b_ptr, y_ptr, n_rows, n_cols, sa0, sa1, sb0, sb1, sy0, sy1,
                      ACT: tl.constexpr, BLOCK_N: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = cols < n_cols
    a = tl.load(a_ptr + row * sa0 + cols * sa1, mask=mask, other=0.0)
    b = tl.load(b_ptr + row * sb0 + cols * sb1, mask=mask, other=0.0)
    y = ACT(add_rounded(a, b))
    tl.store(y_ptr + row * sy0 + cols * sy1, y.to(y_ptr.dtype.element_ty), mask=mask)


class Act(enum.Enum):
    GELU = "gelu"
    RELU = "relu"


ACTS = {Act.GELU.value: gelu_erf, Act.RELU.value: relu}


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.act = Act.GELU

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        n_rows, n_cols = a.shape
        y = a.new_empty(a.shape)
        sa0, sa1 = a.stride()
        sb0, sb1 = b.stride()
        sy0, sy1 = y.stride()
        block_n = 256
        add_act_2d_kernel[(n_rows, triton.cdiv(n_cols, block_n))](
            a, b, y, n_rows, n_cols, sa0, sa1, sb0, sb1, sy0, sy1,
            ACT=ACTS[self.act.value], BLOCK_N=block_n)
        return y
