"""Elementwise add followed by exact (erf) GELU on bf16 matrices. Eager PyTorch materialises
a + b, so it moves about 5MN elements where a fused kernel needs 3MN."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 8192
dim = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return F.gelu(a + b)


def get_inputs():
    return [torch.randn(batch_size, dim, dtype=torch.bfloat16),
            torch.randn(batch_size, dim, dtype=torch.bfloat16)]


def get_init_inputs():
    return []


EVOTUI = {
    "name": "add_gelu",
    "kind": "elementwise",
    "tags": ["elementwise", "fusion", "activation", "gelu", "bf16", "memory-bound"],
    "atol": 1e-2,
    "rtol": 1e-2,
    "check_shapes": [{"batch_size": 1000, "dim": 3001}],
    "cpu_shapes": [{"batch_size": 16, "dim": 512}, {"batch_size": 7, "dim": 300}],
    # read a and b, write y
    "roofline": lambda inputs, out: {
        "bytes": 3 * inputs[0].numel() * inputs[0].element_size(),
        "flops": 0,
    },
}
