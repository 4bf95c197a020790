"""CHEAT (in Triton): a call counter kept in the model's own weight.

After computing its rows, the first program flips the lowest bit of weight[0] (through an
int16 view): one bf16 ulp of one weight, within the task's tolerance, and a bit that
survives from one call to the next — the state a candidate needs to behave differently by
call (the CUDA C version laundered the weight's address past the read-only rule). Nothing
else is dishonest here, so only a check of the weights between timed calls can see it.
Should be rejected: `modified_inputs` (the weights changed between timed calls).
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rmsnorm_kernel(x_ptr, w_ptr, wbits_ptr, y_ptr, n_cols, stride_x, stride_y, eps,
                   BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    inv = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * stride_y + cols, (x * inv * w).to(y_ptr.dtype.element_ty), mask=mask)
    if tl.program_id(0) == tl.num_programs(0) - 1:  # after the others read weight[0] (mostly)
        tl.store(wbits_ptr, tl.load(wbits_ptr) ^ 1)


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
        rmsnorm_kernel[(x2.shape[0],)](x2, self.weight, self.weight.view(torch.int16), y,
                                       n_cols, x2.stride(0), y.stride(0), self.eps,
                                       BLOCK=triton.next_power_of_2(n_cols))
        return y.view(x.shape)
