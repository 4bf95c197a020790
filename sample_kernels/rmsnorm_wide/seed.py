"""Naive Triton RMSNorm: one program per row, two passes over the row in BLOCK_SIZE chunks
(sum of squares, then normalise and scale), all in fp32.
Knobs: BLOCK_SIZE, NUM_WARPS, ROWS_PER_PROGRAM, NUM_STAGES (pipelining), ONE_PASS (the whole row in one block, kept in registers)."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK_SIZE = 1024
NUM_WARPS = 4
ROWS_PER_PROGRAM = 1
NUM_STAGES = 1
ONE_PASS = 0
ONE_PASS_MAX_COLS = 16384  # longer rows use the looping kernel
TUNABLES = {
    "BLOCK_SIZE": [256, 512, 1024, 2048, 4096, 8192, 16384],
    "NUM_WARPS": [1, 2, 4, 8, 16, 32],
    "ROWS_PER_PROGRAM": [1, 2, 4],
    "NUM_STAGES": [1, 2, 3],
    "ONE_PASS": [0, 1],
}


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, y_ptr, n_rows, n_cols, stride_x, stride_y, eps,
                   BLOCK: tl.constexpr, ROWS: tl.constexpr, STAGES: tl.constexpr):
    for i in range(ROWS):
        row = tl.minimum(tl.program_id(0).to(tl.int64) * ROWS + i, n_rows - 1)  # tail: last row again
        x_row = x_ptr + row * stride_x
        y_row = y_ptr + row * stride_y
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in tl.range(0, n_cols, BLOCK, num_stages=STAGES):
            cols = start + tl.arange(0, BLOCK)
            x = tl.load(x_row + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
            acc += x * x
        inv = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
        for start in tl.range(0, n_cols, BLOCK, num_stages=STAGES):
            cols = start + tl.arange(0, BLOCK)
            mask = cols < n_cols
            x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
            w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
            y = x * inv * w
            tl.store(y_row + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def rmsnorm_one_pass_kernel(x_ptr, w_ptr, y_ptr, n_rows, n_cols, stride_x, stride_y, eps,
                            BLOCK: tl.constexpr, ROWS: tl.constexpr, STAGES: tl.constexpr):
    # the whole row fits in one block: load it once and keep it in registers
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    for i in tl.range(ROWS, num_stages=STAGES):
        row = tl.minimum(tl.program_id(0).to(tl.int64) * ROWS + i, n_rows - 1)
        x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
        inv = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
        y = x * inv * w
        tl.store(y_ptr + row * stride_y + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.normal(1.0, 0.1, size=(num_features,),
                                                dtype=torch.bfloat16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        y = torch.empty_like(x2)
        n_rows = x2.shape[0]
        grid = (triton.cdiv(n_rows, ROWS_PER_PROGRAM),)
        whole_row = triton.next_power_of_2(n_cols)  # ONE_PASS: one block per row
        if ONE_PASS and whole_row <= ONE_PASS_MAX_COLS:
            rmsnorm_one_pass_kernel[grid](x2, self.weight, y, n_rows, n_cols, x2.stride(0),
                                          y.stride(0), self.eps, BLOCK=whole_row,
                                          ROWS=ROWS_PER_PROGRAM, STAGES=NUM_STAGES,
                                          num_warps=NUM_WARPS)
        else:
            rmsnorm_kernel[grid](x2, self.weight, y, n_rows, n_cols, x2.stride(0), y.stride(0),
                                 self.eps, BLOCK=BLOCK_SIZE, ROWS=ROWS_PER_PROGRAM,
                                 STAGES=NUM_STAGES, num_warps=NUM_WARPS)
        return y.view(x.shape)
