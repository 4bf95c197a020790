"""Naive Triton RMSNorm with an fp16 weight: one program per row, two passes over the row in
BLOCK_SIZE chunks (sum of squares, then normalise and scale), all in fp32."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK_SIZE = 1024
NUM_WARPS = 4
TUNABLES = {
    "BLOCK_SIZE": [256, 512, 1024, 2048, 4096, 8192],
    "NUM_WARPS": [1, 2, 4, 8, 16, 32],
}


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, y_ptr, n_cols, stride_x, stride_y, eps,
                   BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * stride_x
    y_row = y_ptr + row * stride_y
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        acc += x * x
    inv = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        y = x * inv * w
        tl.store(y_row + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.normal(1.0, 0.1, size=(num_features,),
                                                dtype=torch.float16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        y = torch.empty_like(x2)
        rmsnorm_kernel[(x2.shape[0],)](x2, self.weight, y, n_cols, x2.stride(0), y.stride(0),
                                       self.eps, BLOCK=BLOCK_SIZE, num_warps=NUM_WARPS)
        return y.view(x.shape)
