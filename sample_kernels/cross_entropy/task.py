"""Mean cross-entropy loss over fp32 logits with int64 class targets (KernelBench level 1,
problem 95, at H200 scale). The output is a 0-d tensor, as F.cross_entropy returns."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32768
num_classes = 4096


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(predictions, targets)


def get_inputs():
    return [torch.randn(batch_size, num_classes, dtype=torch.float32),
            torch.randint(0, num_classes, (batch_size,), dtype=torch.int64)]


def get_init_inputs():
    return []


EVOTUI = {
    "name": "cross_entropy",
    "kind": "cross_entropy",
    "tags": ["loss", "reduction", "row-wise", "logsumexp", "gather", "fp32", "memory-bound"],
    "atol": 1e-4,
    "rtol": 1e-4,
    "check_shapes": [{"batch_size": 1000, "num_classes": 3001}],
    "cpu_shapes": [{"batch_size": 16, "num_classes": 512},
                   {"batch_size": 7, "num_classes": 300}],
    # read the logits once and the targets once; the 0-d output is negligible
    "roofline": lambda inputs, out: {
        "bytes": inputs[0].numel() * inputs[0].element_size()
        + inputs[1].numel() * inputs[1].element_size(),
        "flops": 0,
    },
}
