"""Cross-entropy (mean) with a fused logsumexp kernel; reduction picked by a str Enum."""
from __future__ import annotations

from enum import Enum

import torch
import torch.nn as nn
import triton
import triton.language as tl


class Reduction(str, Enum):  # noqa: UP042 - the form the test is about
    MEAN = "mean"
    SUM = "sum"


@triton.jit
def _ce_fwd_kernel(logits_ptr, targets_ptr, loss_ptr, n_rows, n_cols, stride_row, scale,
                   BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    base = logits_ptr + row * stride_row
    m = -float("inf")
    s = 0.0
    for start in range(0, n_cols, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(base + cols, mask=cols < n_cols, other=float("-inf")).to(tl.float32)
        new_m = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - new_m) + tl.sum(tl.exp(x - new_m), axis=0)
        m = new_m
    lse = m + tl.log(s)
    target = tl.load(targets_ptr + row)
    target_logit = tl.load(base + target).to(tl.float32)
    tl.atomic_add(loss_ptr, (lse - target_logit) * scale)


class ModelNew(nn.Module):
    def __init__(self, reduction: Reduction = Reduction.MEAN):
        super().__init__()
        self.reduction = Reduction(reduction)

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        predictions = predictions.contiguous()
        n_rows, n_cols = predictions.shape
        loss = torch.zeros((), dtype=torch.float32, device=predictions.device)
        scale = 1.0 / n_rows if self.reduction is Reduction.MEAN else 1.0
        BLOCK_SIZE = min(triton.next_power_of_2(n_cols), 4096)
        _ce_fwd_kernel[(n_rows,)](predictions, targets, loss, n_rows, n_cols,
                                  predictions.stride(0), scale, BLOCK_SIZE=BLOCK_SIZE)
        return loss
