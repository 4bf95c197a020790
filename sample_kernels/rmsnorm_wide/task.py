"""RMSNorm with a learned weight over long bf16 rows (2048 rows of 16384: the bytes of the
rmsnorm sample in another shape), for the "learn on one shape, solve another" experiment
(`evotui ab sample_kernels/rmsnorm --learn sample_kernels/rmsnorm_wide`)."""

import torch
import torch.nn as nn

batch_size = 2048
dim = 16384
eps = 1e-6


class Model(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        # ones plus a small deterministic (under torch.manual_seed) perturbation
        self.weight = nn.Parameter(torch.normal(1.0, 0.1, size=(num_features,),
                                                dtype=torch.bfloat16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = x.float()
        inv = torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return (xf * inv * self.weight.float()).to(x.dtype)


def get_inputs():
    return [torch.randn(batch_size, dim, dtype=torch.bfloat16)]


def get_init_inputs():
    return [dim, eps]


EVOTUI = {
    "name": "rmsnorm_wide",
    "kind": "rmsnorm",
    "tags": ["normalization", "reduction", "row-wise", "bf16", "memory-bound"],
    "atol": 1e-2,
    "rtol": 1e-2,
    "check_shapes": [{"batch_size": 1000, "dim": 3001}],
    "cpu_shapes": [{"batch_size": 4, "dim": 2048}, {"batch_size": 3, "dim": 1500}],
    # read x, write y, read the weight once
    "roofline": lambda inputs, out: {
        "bytes": 2 * inputs[0].numel() * inputs[0].element_size()
        + inputs[0].shape[-1] * inputs[0].element_size(),
        "flops": 0,
    },
}
