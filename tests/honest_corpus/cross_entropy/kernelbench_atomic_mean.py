import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def cross_entropy_kernel(
    logits_ptr,  # Pointer to the logits, shape (N, C)
    targets_ptr,  # Pointer to the targets, shape (N,)
    loss_ptr,  # Pointer to the scalar loss (accumulated with atomics)
    n_rows,  # Number of rows N
    n_cols,  # Number of classes C
    stride,  # Row stride of the logits
    BLOCK_SIZE: tl.constexpr,
):
    # Each program handles one row
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_cols
    # Load the whole row (the number of classes fits in one block)
    x = tl.load(logits_ptr + row * stride + offsets, mask=mask, other=float("-inf"))
    x_max = tl.max(x, axis=0)
    lse = x_max + tl.log(tl.sum(tl.exp(x - x_max), axis=0))
    target = tl.load(targets_ptr + row)
    x_t = tl.load(logits_ptr + row * stride + target)
    # Accumulate the mean directly into the output
    tl.atomic_add(loss_ptr, (lse - x_t) / n_rows)


def triton_cross_entropy(predictions: torch.Tensor, targets: torch.Tensor):
    """
    This function wraps the Triton kernel call. It:
      1. Ensures the inputs are contiguous on GPU.
      2. Calculates the grid (blocks) needed.
      3. Launches the Triton kernel.
    """
    predictions = predictions.contiguous()
    targets = targets.contiguous()

    # Prepare output tensor (zero-initialised, the kernel accumulates into it)
    loss = torch.zeros((), dtype=predictions.dtype, device=predictions.device)

    n_rows, n_cols = predictions.shape
    BLOCK_SIZE = triton.next_power_of_2(n_cols)  # One block per row

    # Determine the number of blocks needed
    grid = lambda meta: (n_rows,)

    # Launch the Triton kernel
    cross_entropy_kernel[grid](predictions, targets, loss, n_rows, n_cols,
                               predictions.stride(0), BLOCK_SIZE=BLOCK_SIZE)
    return loss


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()

    def forward(self, predictions, targets):
        # Instead of "return F.cross_entropy(predictions, targets)", call our Triton kernel
        return triton_cross_entropy(predictions, targets)
