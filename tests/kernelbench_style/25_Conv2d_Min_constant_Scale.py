import torch
import torch.nn as nn


class Model(nn.Module):
    """2D convolution, clipped from above by a constant tensor made in forward, then scaled."""

    def __init__(self, in_channels, out_channels, kernel_size, ceiling, scale):
        super(Model, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.ceiling = ceiling
        self.scale = scale

    def forward(self, x):
        x = self.conv(x)
        x = torch.min(x, torch.tensor(self.ceiling))
        x = x * torch.tensor(self.scale) + torch.tensor(1.0) / 4
        return x


batch_size = 32
in_channels = 8
out_channels = 16
height, width = 64, 48
kernel_size = 3
ceiling = 0.25
scale = 1.5


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, ceiling, scale]
