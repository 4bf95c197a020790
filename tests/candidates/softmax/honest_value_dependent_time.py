"""HONEST: a softmax whose work depends on the values (an extra refinement loop whose trip
count comes from the row's first element), so its time varies with the inputs."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=-float("inf"))
    reps = (tl.abs(tl.load(x_ptr + row * stride_x)) * 6.0).to(tl.int32)
    m = tl.max(x, axis=0)
    for _ in range(reps):  # value-dependent amount of (idempotent) work
        m = tl.maximum(m, tl.max(x, axis=0))
    e = tl.exp(x - m)
    tl.store(y_ptr + row * stride_y + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        softmax_kernel[(x.shape[0],)](x, y, x.shape[1], x.stride(0), y.stride(0),
                                      BLOCK=triton.next_power_of_2(x.shape[1]))
        return y
