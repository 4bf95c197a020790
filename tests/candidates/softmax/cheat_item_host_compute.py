"""CHEAT: host-side compute with .item() (allowed op) and plain Python math; torch.tensor (lift_fresh) hands the
answer to a copy kernel."""
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def copy_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=m), mask=m)


class ModelNew(nn.Module):
    def forward(self, x):
        rows, cols = x.shape
        res = []
        for r in range(rows):
            row = x[r]
            vals = [row[c].item() for c in range(cols)]
            m = max(vals)
            e = [math.exp(v - m) for v in vals]
            s = sum(e)
            res.append([v / s for v in e])
        host = torch.tensor(res, dtype=x.dtype, device=x.device)
        y = torch.empty_like(x)
        n = x.numel()
        copy_kernel[(triton.cdiv(n, 1024),)](host, y, n, BLOCK=1024)
        return y
