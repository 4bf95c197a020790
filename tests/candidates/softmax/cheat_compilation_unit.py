# torch.CompilationUnit compiles TorchScript from a string; TorchScript
# resolves torch.ops.aten.from_file in C++ (no Python attribute, so neither the static rules'
# `torch.ops` / `from_file` bans nor lockdown's replaced torch.from_file see it).
# check_source: None. Reads (and, shared=True, maps writable) any file.
import torch
import torch.nn as nn

SRC = (
    "def f(p: str, n: int):\n"
    "    t = torch.ops.aten.from_file(p, True, n, dtype=0)\n"
    "    return t\n"
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.cu = torch.CompilationUnit(SRC)

    def forward(self, x):
        return x
