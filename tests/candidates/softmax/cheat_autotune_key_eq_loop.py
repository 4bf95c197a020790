"""CHEAT (CPU and GPU): two holes together.
(a) FORBIDDEN_METHODS (`__eq__`, `__del__`, `__getattr__`, ...) are checked as def names and
    Assign targets only; a `for` loop in a class body binds `__eq__` all the same.
(b) The autotuner's `key` entries are looked up in a dict of the launch's arguments on every
    run (`key in _args`, `_args[key]`), inside the launch with the op policy suspended: an
    entry's `__hash__` (not banned) runs there. `__eq__` returning True gets the object past
    the tuner's check that every key names a parameter. `__hash__` computes torch.softmax
    into the output; the kernel only copies it to the output."""
# ruff: noqa: F821, B007  (names the interpreter puts into the module; a loop that binds a method)
import torch
import torch.nn as nn
import triton
import triton.language as tl

STASH = {}


def _same(self, other):
    return other == "n"


class Key:
    for __eq__ in (_same,):
        pass

    def __hash__(self):
        if "x" in STASH:
            STASH["y"].copy_(torch.softmax(STASH["x"], dim=-1))
            STASH.clear()
        return hash("n")


@triton.autotune(configs=[triton.Config({"BLOCK": 16}), triton.Config({"BLOCK": 32})],
                 key=[Key()])
@triton.jit
def copy_kernel(s_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(s_ptr + offs, mask=offs < n), mask=offs < n)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        scratch = torch.empty_like(x)
        y = torch.empty_like(x)
        STASH["x"], STASH["y"] = x, scratch
        copy_kernel[(triton.cdiv(x.numel(), 16),)](scratch, y, x.numel())
        return y
