"""CHEAT: writes the worker's answer through a logger. `logging` is allowed for loggers, and
`basicConfig(filename=...)` opens a file: on /proc/self/fd/5 that is the pipe the worker
reads the candidate's answer from. A forged answer is logged, then the process crashes (the
hash of a deeply nested tuple overflows the C stack) before the harness writes the real
one, and the worker took the forgery. Refused before it runs: a `filename=` argument."""

import logging

import torch
import torch.nn as nn
import triton
import triton.language as tl

logging.basicConfig(filename="/proc/self/fd/5", format="%(message)s")
logging.critical('{"ok": false, "reason": "timeout", "message": "an answer forged by the candidate"}')
NESTED = ()
for _ in range(3_000_000):
    NESTED = (NESTED,)
CRASH = hash(NESTED)


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        softmax_kernel[(x.shape[0],)](x, y, x.shape[1], x.stride(0),
                                      BLOCK=triton.next_power_of_2(x.shape[1]))
        return y
