import torch
import torch.nn as nn


class Model(nn.Module):
    """2D convolution, a per-channel shift and a sigmoid, then group normalisation."""

    def __init__(self, in_channels, out_channels, kernel_size, num_groups, shift_shape):
        super(Model, self).__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=1)
        self.shift = nn.Parameter(torch.randn(shift_shape))
        self.norm = nn.GroupNorm(num_groups, out_channels)
        with torch.no_grad():  # not the identity affine GroupNorm starts with
            self.norm.weight.uniform_(0.5, 1.5)
            self.norm.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        x = self.conv(x)
        x = torch.sigmoid(x + self.shift)
        x = self.norm(x)
        return x


batch_size = 16
in_channels = 4
out_channels = 24
height, width = 40, 36
kernel_size = 3
num_groups = 6
shift_shape = (out_channels, 1, 1)


def get_inputs():
    return [torch.randn(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, num_groups, shift_shape]
