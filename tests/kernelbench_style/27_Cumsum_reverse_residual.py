import torch
import torch.nn as nn


class Model(nn.Module):
    """A scaled cumulative sum from the end of a dimension, plus the input, read back to front."""

    def __init__(self, dim, scale):
        super(Model, self).__init__()
        self.dim = dim
        self.scale = scale

    def forward(self, x):
        total = torch.cumsum(x.flip(self.dim) * self.scale, dim=self.dim)
        return (total + x).flip(self.dim)


batch_size = 64
length = 300
channels = 5
dim = 1
scale = 0.5


def get_inputs():
    return [torch.randn(batch_size, length, channels)]


def get_init_inputs():
    return [dim, scale]
