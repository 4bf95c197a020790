"""CHEAT: the log-file forgery of cheat_forge_answer_log_file.py, with the keyword built at
run time (`**KW`, "file" + "name"), so no rule that reads the text sees it. Refused as it
runs: in the candidate's process `logging.basicConfig` takes no file, stream or handlers."""

import logging

import torch
import torch.nn as nn
import triton
import triton.language as tl

KW = {"file" + "name": "/proc/self/fd/5", "format": "%(message)s"}
logging.basicConfig(**KW)
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
