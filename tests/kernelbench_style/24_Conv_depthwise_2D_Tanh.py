import torch
import torch.nn as nn


class Model(nn.Module):
    """Depthwise 2D convolution (one filter per channel), then tanh and a scale."""

    def __init__(self, channels, kernel_size, padding, scale):
        super(Model, self).__init__()
        self.depthwise = nn.Conv2d(channels, channels, kernel_size, padding=padding,
                                   groups=channels)
        self.scale = scale

    def forward(self, x):
        x = self.depthwise(x)
        x = torch.tanh(x)
        x = x * self.scale
        return x


batch_size = 64
channels = 128
height, width = 256, 128
kernel_size = 5
padding = 2
scale = 0.5


def get_inputs():
    return [torch.randn(batch_size, channels, height, width)]


def get_init_inputs():
    return [channels, kernel_size, padding, scale]
