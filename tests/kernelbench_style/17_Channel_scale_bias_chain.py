import torch
import torch.nn as nn


class Model(nn.Module):
    """x * scale + bias with per-channel parameters, then sigmoid and a clamp."""

    def __init__(self, channels):
        super(Model, self).__init__()
        self.scale = nn.Parameter(torch.rand(channels, 1, 1) + 0.5)
        self.bias = nn.Parameter(torch.randn(channels, 1, 1))

    def forward(self, x):
        x = torch.sigmoid(x * self.scale + self.bias)
        return torch.clamp(x, min=0.1, max=0.9)


batch_size = 64
channels = 128
height = 256
width = 256


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels]
