"""bf16 GEMM with a fused bias + ReLU epilogue: relu(x @ W^T + b) with W, b from an
nn.Linear held in bf16 (KernelBench level 2 style, at H200 scale). Compute-bound: at 8192^3
the arithmetic intensity is far above the H200 ridge point, so the ceiling is cuBLAS."""

import torch
import torch.nn as nn

batch_size = 8192
in_features = 8192
out_features = 8192


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=True, dtype=torch.bfloat16)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.linear(x))


def get_inputs():
    return [torch.randn(batch_size, in_features, dtype=torch.bfloat16)]


def get_init_inputs():
    return [in_features, out_features]


EVOTUI = {
    "name": "matmul_bias_relu",
    "kind": "gemm",
    "tags": ["gemm", "matmul", "epilogue", "bias", "relu", "bf16", "compute-bound"],
    "atol": 2e-2,
    "rtol": 2e-2,
    "check_shapes": [{"batch_size": 1000, "in_features": 1000, "out_features": 3001}],
    "cpu_shapes": [{"batch_size": 64, "in_features": 64, "out_features": 96},
                   {"batch_size": 33, "in_features": 70, "out_features": 45}],
    # 2MNK FLOPs; read x and W once, write y once
    "roofline": lambda inputs, out: {
        "bytes": (inputs[0].numel() + inputs[0].shape[-1] * out.shape[-1] + out.numel())
        * inputs[0].element_size(),
        "flops": 2 * inputs[0].numel() * out.shape[-1],
    },
}
