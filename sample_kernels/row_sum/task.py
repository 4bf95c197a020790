"""Sum over dim 1 with keepdim on an fp32 matrix (KernelBench level 1, problem 47 style, at
H200 scale). A control task: eager PyTorch is already near the copy roofline, so a large
speedup here points at the harness rather than the kernel."""

import torch
import torch.nn as nn

batch_size = 8192
dim = 8192
reduce_dim = 1


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=self.dim, keepdim=True)


def get_inputs():
    return [torch.randn(batch_size, dim, dtype=torch.float32)]


def get_init_inputs():
    return [reduce_dim]


EVOTUI = {
    "name": "row_sum",
    "kind": "reduction",
    "tags": ["reduction", "row-wise", "sum", "fp32", "memory-bound", "control"],
    "atol": 1e-3,
    "rtol": 1e-4,
    "check_shapes": [{"batch_size": 1000, "dim": 3001}],
    "cpu_shapes": [{"batch_size": 16, "dim": 512}, {"batch_size": 7, "dim": 300}],
    # read x once, write one value per row
    "roofline": lambda inputs, out: {
        "bytes": (inputs[0].numel() + out.numel()) * inputs[0].element_size(),
        "flops": 0,
    },
}
