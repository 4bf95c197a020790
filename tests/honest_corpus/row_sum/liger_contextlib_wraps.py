"""Row sum with the host code written the way Liger-Kernel and Unsloth write it: an
`ensure_contiguous` decorator made with `functools.wraps` on a plain function (not an
autograd Function), `contextlib.nullcontext()` as the guard off CUDA, an `infer_device()`
helper that checks `torch.xpu` and `torch.cuda`."""

import contextlib
import functools

import torch
import torch.nn as nn
import triton
import triton.language as tl


def infer_device():
    """Get current device name based on available devices."""
    if torch.cuda.is_available():
        return "cuda"
    elif hasattr(torch, "xpu") and torch.xpu.is_available():
        return "xpu"
    return "cpu"


def ensure_contiguous(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        args = [a.contiguous() if isinstance(a, torch.Tensor) else a for a in args]
        return fn(*args, **kwargs)

    return wrapper


@triton.jit
def _row_sum_kernel(X, Y, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for off in tl.range(0, n_cols, BLOCK):
        cols = off + tl.arange(0, BLOCK)
        acc += tl.load(X + row * stride + cols, mask=cols < n_cols, other=0.0)
    tl.store(Y + row, tl.sum(acc, axis=0))


@ensure_contiguous
def row_sum(x: torch.Tensor) -> torch.Tensor:
    n_rows, n_cols = x.shape
    y = torch.empty((n_rows, 1), dtype=x.dtype, device=x.device)
    guard = torch.cuda.device(x.device) if infer_device() == "cuda" and x.is_cuda else contextlib.nullcontext()
    with guard:
        _row_sum_kernel[(n_rows,)](x, y, x.stride(0), n_cols, BLOCK=1024, num_warps=4)
    return y


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return row_sum(x)
