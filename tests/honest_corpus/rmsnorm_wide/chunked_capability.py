"""RMSNorm for long rows: two passes over the row in chunks, the chunk size and warp count
picked from `torch.cuda.get_device_capability()` where there is a GPU (Hopper gets larger
chunks), a guard from `contextlib.nullcontext()` elsewhere."""

import contextlib

import torch
import torch.nn as nn
import triton
import triton.language as tl


def chunk_config(device: torch.device):
    if device.type == "cuda" and torch.cuda.is_available():
        major, _minor = torch.cuda.get_device_capability(device)
        if major >= 9:
            return 4096, 16
        return 2048, 8
    return 1024, 4


@triton.jit
def rms_norm_chunked_kernel(X, W, Y, stride, N, eps, CHUNK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = X + row * stride
    y_row = Y + row * stride
    acc = tl.zeros([CHUNK], dtype=tl.float32)
    for off in tl.range(0, N, CHUNK):
        cols = off + tl.arange(0, CHUNK)
        x = tl.load(x_row + cols, mask=cols < N, other=0.0).to(tl.float32)
        acc += x * x
    rstd = tl.rsqrt(tl.sum(acc, axis=0) / N + eps)
    for off in tl.range(0, N, CHUNK):
        cols = off + tl.arange(0, CHUNK)
        mask = cols < N
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(W + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_row + cols, (x * rstd * w).to(Y.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.normal(1.0, 0.1, size=(num_features,), dtype=torch.bfloat16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.shape[-1]
        x2 = x.contiguous().view(-1, n)
        y = torch.empty_like(x2)
        chunk, warps = chunk_config(x.device)
        guard = torch.cuda.device(x.device) if x.is_cuda else contextlib.nullcontext()
        with guard:
            rms_norm_chunked_kernel[(x2.shape[0],)](x2, self.weight, y, x2.stride(0), n, self.eps,
                                                    CHUNK=chunk, num_warps=warps)
        return y.view_as(x)
