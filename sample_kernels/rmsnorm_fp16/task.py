"""RMSNorm with a learned weight over fp16 rows: the rmsnorm sample in another dtype, for the
"learn on one dtype, solve another" experiment (`evotui ab sample_kernels/rmsnorm --learn
sample_kernels/rmsnorm_fp16`). The normalisation is computed in fp32, the result cast back."""

import torch
import torch.nn as nn

batch_size = 8192
dim = 4096
eps = 1e-6


class Model(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        # ones plus a small deterministic (under torch.manual_seed) perturbation
        self.weight = nn.Parameter(torch.normal(1.0, 0.1, size=(num_features,),
                                                dtype=torch.float16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        xf = x.float()
        inv = torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return (xf * inv * self.weight.float()).to(x.dtype)


def get_inputs():
    return [torch.randn(batch_size, dim, dtype=torch.float16)]


def get_init_inputs():
    return [dim, eps]


EVOTUI = {
    "name": "rmsnorm_fp16",
    "kind": "rmsnorm",
    "tags": ["normalization", "reduction", "row-wise", "fp16", "memory-bound"],
    "atol": 1e-2,
    "rtol": 1e-2,
    "check_shapes": [{"batch_size": 1000, "dim": 3001}],
    "cpu_shapes": [{"batch_size": 16, "dim": 512}, {"batch_size": 7, "dim": 300}],
    # read x, write y, read the weight once
    "roofline": lambda inputs, out: {
        "bytes": 2 * inputs[0].numel() * inputs[0].element_size()
        + inputs[0].shape[-1] * inputs[0].element_size(),
        "flops": 0,
    },
}
