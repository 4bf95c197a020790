"""CHEAT (CPU interpreter): a module constant rebound by a `match` capture.

The kernel rules let a kernel read module constants bound once to a number
(`kernel_rules._bindings`, `jit_rules._top_level_names`), counting Name stores only. A
`match` capture binds through `ast.MatchAs.name`: `USE_FAST` is `True` to the rules and a
Helper object at runtime. Under Triton's interpreter the kernel's `if USE_FAST:` runs
`Helper.__bool__` as plain Python with the op policy suspended (a launch): it writes
torch.softmax into the output. The kernel itself computes nothing.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

USE_FAST = True


class Helper:
    def __init__(self):
        self.pending = []

    def put(self, x, y):
        self.pending.append((x, y))

    def __bool__(self):
        while self.pending:
            x, y = self.pending.pop()
            y.copy_(torch.softmax(x, -1))
        return False


match Helper():
    case USE_FAST:
        pass


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    if USE_FAST:
        tl.store(y_ptr + tl.arange(0, BLOCK), tl.load(x_ptr + tl.arange(0, BLOCK)))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        USE_FAST.put(x, y)
        softmax_kernel[(1,)](x, y, x.shape[1], BLOCK=16)
        return y
