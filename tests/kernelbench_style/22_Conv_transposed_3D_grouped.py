import torch
import torch.nn as nn


class Model(nn.Module):
    """
    Performs a transposed 3D convolution with a square kernel, stride, padding and groups.

    Args:
        in_channels (int): Number of channels in the input tensor.
        out_channels (int): Number of channels produced by the convolution.
        kernel_size (int): Size of the (cubic) convolution kernel.
        stride (int): Stride of the convolution.
        padding (int): Padding applied to the input.
        groups (int): Number of blocked connections from input to output channels.
    """

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int = 1,
                 padding: int = 0, groups: int = 1, bias: bool = False):
        super(Model, self).__init__()
        self.conv_transpose3d = nn.ConvTranspose3d(in_channels, out_channels,
                                                   (kernel_size, kernel_size, kernel_size),
                                                   stride=stride, padding=padding,
                                                   groups=groups, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv_transpose3d(x)


batch_size = 2
in_channels = 8
out_channels = 8
kernel_size = 3
depth = 4
height = 8
width = 8
stride = 2
padding = 1
groups = 2


def get_inputs():
    x = torch.rand(batch_size, in_channels, depth, height, width)
    return [x]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, stride, padding, groups]
