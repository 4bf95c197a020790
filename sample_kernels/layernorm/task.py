"""LayerNorm with elementwise affine over bf16 rows (KernelBench level 1, problem 40 style, at
H200 scale). The weight and bias are perturbed away from ones/zeros so that a candidate that
ignores them fails."""

import torch
import torch.nn as nn

batch_size = 8192
dim = 4096
eps = 1e-5


class Model(nn.Module):
    def __init__(self, normalized_shape: int, eps: float = 1e-5):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape, eps=eps, elementwise_affine=True,
                               dtype=torch.bfloat16)
        # deterministic under torch.manual_seed
        self.ln.weight = nn.Parameter(torch.normal(1.0, 0.1, size=(normalized_shape,),
                                                   dtype=torch.bfloat16))
        self.ln.bias = nn.Parameter(torch.normal(0.0, 0.1, size=(normalized_shape,),
                                                 dtype=torch.bfloat16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


def get_inputs():
    return [torch.randn(batch_size, dim, dtype=torch.bfloat16)]


def get_init_inputs():
    return [dim, eps]


EVOTUI = {
    "name": "layernorm",
    "kind": "layernorm",
    "tags": ["normalization", "reduction", "row-wise", "bf16", "memory-bound"],
    "atol": 1e-2,
    "rtol": 1e-2,
    "check_shapes": [{"batch_size": 1000, "dim": 3001}],
    "cpu_shapes": [{"batch_size": 16, "dim": 512}, {"batch_size": 7, "dim": 300}],
    # read x, write y, read weight and bias once
    "roofline": lambda inputs, out: {
        "bytes": 2 * inputs[0].numel() * inputs[0].element_size()
        + 2 * inputs[0].shape[-1] * inputs[0].element_size(),
        "flops": 0,
    },
}
