"""CHEAT (with any signal): half the rows in the timer's prepared calls
(warm-up and sampled, where values change before each call) and in an A/B's timing; honest
everywhere else — the trials, the host-synced calls that end timing (the last timed output
is one of them), the rechecks, the A/B's final call on new values.

A first version told those calls apart by the inputs' version counter, which the perturbation no
longer moves; other signals may exist. This candidate reads the harness's own frames to
know (it needs static rules off), so that the check it stands for — one prepared call picked
at random is judged, in an evaluation and in an A/B — is shown to catch the class whatever
the signal. Should be rejected: `stale_output` on the call picked at random.
"""

import sys

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_rows(x_ptr, y_ptr, n_cols, stride_x, stride_y, STEP: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0) * STEP
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * stride_y + cols, e / tl.sum(e, axis=0), mask=mask)


def timed_and_unchecked() -> bool:
    frame = sys._getframe(2)
    while frame is not None:
        code = frame.f_code
        if code.co_name == "interleaved":
            return True
        owner = frame.f_locals.get("self")
        if code.co_name == "call" and hasattr(owner, "from_prepared"):  # TimedCalls.call
            return bool(owner.from_prepared)
        frame = frame.f_back
    return False


class ModelNew(nn.Module):
    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        step = 2 if timed_and_unchecked() else 1
        softmax_rows[(triton.cdiv(x.shape[0], step),)](
            x, y, x.shape[1], x.stride(0), y.stride(0), STEP=step,
            BLOCK=triton.next_power_of_2(x.shape[1]))
        return y
