"""CHEAT: the answer computed in Python on the host, its inputs read through
`str(tensor)`.

Printing a tensor runs inside torch's `_disable_current_modes()`: the op policy records
nothing, and no `.item()` is counted (the 64-read cap and the no-read-after-a-launch rule never
fire). Viewed as int32 (an allowed view), a slice of at most 1000 elements prints in full, so
every input bit reaches Python exactly. Python decodes the floats (`math.ldexp`), computes the
softmax with `math.exp`, and `torch.tensor(rows)` (allowed: `lift_fresh`) brings it back; a
Triton kernel only copies it into the output, so the launch count matches and the ghost replay
(copy skipped: poisoned/unwritten output) is wrong, as an honest kernel's would be.
No kernel computes anything of the softmax.
"""

import math

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


def as_float(bits):
    exponent = (bits >> 23) & 0xFF
    mantissa = bits & 0x7FFFFF
    if exponent == 0:
        value = math.ldexp(mantissa, -149)
    else:
        value = math.ldexp(mantissa | 0x800000, exponent - 150)
    return -value if bits < 0 else value


def read_row(row):
    """The exact values of a 1-D float32 tensor, through its printed int32 bits."""
    values = []
    for start in range(0, row.shape[0], 1000):
        text = str(row[start:start + 1000].view(torch.int32))
        body = text[text.index("[") + 1:text.rindex("]")]
        values += [as_float(int(v)) for v in body.replace("\n", " ").split(",")]
    return values


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows = []
        for i in range(x.shape[0]):
            v = read_row(x[i])
            m = max(v)
            e = [math.exp(a - m) for a in v]
            s = math.fsum(e)
            rows.append([a / s for a in e])
        answer = torch.tensor(rows, dtype=torch.float32)
        y = torch.empty_like(x)
        n = x.numel()
        copy_kernel[(triton.cdiv(n, 1024),)](answer, y, n, BLOCK=1024)
        return y
