import torch
import torch.nn as nn


class Model(nn.Module):
    """Batched C[b] = A[b] @ B[b]^T."""

    def __init__(self):
        super(Model, self).__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.bmm(A, B.transpose(1, 2))


batch_size = 128
m = 128 * 4
k = 256 * 4
n = 512 * 4


def get_inputs():
    A = torch.rand(batch_size, m, k)
    B = torch.rand(batch_size, n, k)
    return [A, B]


def get_init_inputs():
    return []
