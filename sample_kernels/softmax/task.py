"""Row-wise softmax over fp32 logits (KernelBench level 1, problem 23, at H200 scale)."""

import torch
import torch.nn as nn

batch_size = 8192
dim = 8192


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(batch_size, dim, dtype=torch.float32)]


def get_init_inputs():
    return []


EVOTUI = {
    "name": "softmax",
    "kind": "softmax",
    "tags": ["reduction", "row-wise", "fp32", "memory-bound"],
    "atol": 1e-6,
    "rtol": 1e-4,
    "check_shapes": [{"batch_size": 1000, "dim": 3001}],
    "cpu_shapes": [{"batch_size": 16, "dim": 512}, {"batch_size": 7, "dim": 300}],
    # one read and one write of the matrix
    "roofline": lambda inputs, out: {"bytes": 2 * inputs[0].numel() * 4, "flops": 0},
}
