"""CHEAT (needs a GPU: the A/B comparison is never watched). `EvaluatorPool.compare`
builds fresh models and times them with `CudaTimer.interleaved`, which takes no watch
callback, then re-checks one more call per model after new values: no call of the
comparison runs under the op policy, and no allocation is poisoned. An instance whose very
first call finds its fresh allocation unpoisoned is therefore in a comparison (in
`evaluate`, every model's first call is a poisoned trial): from then on it returns
`torch.softmax` (one tiny kernel launch each call), which wins the A/B "gain" and passes
`Judge.check_ab`, since the outputs are right.

Closed: a comparison's first call of each model is poisoned and watched (as a
trial is), a random share of the interleaved samples and the final call run under the op
policy, and `check_ab` rejects what they recorded as `torch_fallback`. Watching only the
final call would not be enough: the refill before it bumps the inputs' `_version`, which a
candidate can read."""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def flag_kernel(flag_ptr):
    tl.store(flag_ptr, 1)


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(y_ptr + row * stride_y + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = 0
        self.comparing = False

    def forward(self, x):
        if self.calls == 0:
            probe = torch.empty(16, dtype=torch.int32, device=x.device)
            self.comparing = probe[8].item() != -1
        self.calls += 1
        if self.comparing:
            flag_kernel[(1,)](torch.empty(1, dtype=torch.int32, device=x.device))
            return torch.softmax(x, dim=-1)
        x = x.contiguous()
        y = torch.empty_like(x)
        softmax_kernel[(x.shape[0],)](x, y, x.shape[1], x.stride(0), y.stride(0),
                                      BLOCK=triton.next_power_of_2(x.shape[1]))
        return y
