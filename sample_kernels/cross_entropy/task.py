"""Mean cross-entropy loss over fp32 logits with int64 class targets (KernelBench level 1,
problem 95, at H200 scale). The output is a 0-d tensor, as F.cross_entropy returns."""

import torch
import torch.nn as nn
import torch.nn.functional as F

batch_size = 32768
num_classes = 4096
HOT_CLASSES = 4
HOT_LOGIT = 8.0


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, predictions: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(predictions, targets)


def get_inputs():
    # peaked rows, as a language model's are: a few classes per row stand well above the
    # rest, at random columns (a loss estimated from part of each row misses them; on plain
    # randn logits a quarter of each row gave a mean within tolerance: red team round 12)
    logits = torch.randn(batch_size, num_classes, dtype=torch.float32)
    hot = torch.randint(0, num_classes, (batch_size, HOT_CLASSES))
    logits.scatter_add_(1, hot, torch.full((batch_size, HOT_CLASSES), HOT_LOGIT))
    return [logits, torch.randint(0, num_classes, (batch_size,), dtype=torch.int64)]


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
