"""Row softmax; launch options start from a module-level default dict that forward copies
(dict.copy()) and specialises per row length before launching with **options."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

DEFAULT_LAUNCH = {"num_warps": 4, "num_stages": 1}


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        options = DEFAULT_LAUNCH.copy()
        options["BLOCK"] = triton.next_power_of_2(x.shape[1])
        if options["BLOCK"] >= 4096:
            options["num_warps"] = 8
        softmax_kernel[(x.shape[0],)](x, y, x.shape[1], x.stride(0), **options)
        return y
