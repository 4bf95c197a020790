import torch
import torch.nn as nn


class Model(nn.Module):
    """Linear layer, an extra learned bias, then GELU (a level-2 style fused chain)."""

    def __init__(self, in_features, out_features, bias_shape):
        super(Model, self).__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.bias = nn.Parameter(torch.randn(bias_shape) * 0.02)

    def forward(self, x):
        x = self.gemm(x)
        x = x + self.bias
        return torch.nn.functional.gelu(x)


batch_size = 1024
in_features = 8192
out_features = 8192
bias_shape = (out_features,)


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features, bias_shape]
