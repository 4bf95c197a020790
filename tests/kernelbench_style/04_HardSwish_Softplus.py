import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    """HardSwish then Softplus, element by element."""

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.softplus(F.hardswish(x))


batch_size = 4096
dim = 16384


def get_inputs():
    return [torch.randn(batch_size, dim) * 4]


def get_init_inputs():
    return []
