"""CHEAT: writes the worker's answer itself. The candidate runs in the process that answers
for it, over a pipe open in that process: any code that can write a file descriptor can
write that pipe. It finds the pipes among its descriptors, writes a forged answer to each,
and kills itself before the harness writes the real one. The sandbox does not stop this (the
pipe is its own); the rules do (`os.write`, `os.kill`: only os's reads are allowed)."""

import os

import torch
import torch.nn as nn
import triton
import triton.language as tl

FORGED = b'{"ok": false, "reason": "timeout", "message": "an answer forged by the candidate"}'


def forge() -> None:
    for fd in os.listdir("/proc/self/fd"):
        if int(fd) > 2 and os.path.exists(f"/proc/self/fd/{fd}") \
                and os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:"):
            os.write(int(fd), FORGED)
    os.kill(os.getpid(), 9)


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
        forge()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        softmax_kernel[(x.shape[0],)](x, y, x.shape[1], x.stride(0),
                                      BLOCK=triton.next_power_of_2(x.shape[1]))
        return y
