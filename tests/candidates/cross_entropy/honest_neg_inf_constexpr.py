"""HONEST: Cross entropy: per-row loss with online logsumexp into a scratch buffer, then a second
kernel for the mean; 0-d output allocated with torch.empty(()); NEG_INF = float('-inf')."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

NEG_INF = tl.constexpr(float("-inf"))


@triton.jit
def row_loss_kernel(logits_ptr, targets_ptr, loss_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = logits_ptr + row * stride
    m = NEG_INF
    s = 0.0
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(base + cols, mask=cols < n_cols, other=NEG_INF)
        new_m = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - new_m) + tl.sum(tl.exp(x - new_m), axis=0)
        m = new_m
    t = tl.load(targets_ptr + row)
    tl.device_assert((t >= 0) & (t < n_cols), "target out of range")
    x_t = tl.load(base + t)
    tl.store(loss_ptr + row, m + tl.log(s) - x_t)


@triton.jit
def mean_kernel(loss_ptr, out_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in tl.range(0, n, BLOCK):
        idx = start + tl.arange(0, BLOCK)
        acc += tl.load(loss_ptr + idx, mask=idx < n, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0) / n)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        predictions = predictions.contiguous()
        n_rows, n_cols = predictions.shape
        losses = torch.empty(n_rows, device=predictions.device, dtype=torch.float32)
        out = torch.empty((), device=predictions.device, dtype=torch.float32)
        row_loss_kernel[(n_rows,)](predictions, targets, losses, n_cols, predictions.stride(0),
                                   BLOCK=min(1024, triton.next_power_of_2(n_cols)))
        mean_kernel[(1,)](losses, out, n_rows, BLOCK=1024)
        return out
