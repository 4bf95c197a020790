import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def rmsnorm_kernel(
    x_ptr,  # Pointer to the input
    w_ptr,  # Pointer to the weight
    out_ptr,  # Pointer to the output
    n_cols,  # Number of features per row
    eps,  # Epsilon for numerical stability
    BLOCK_SIZE: tl.constexpr,
):
    # Each program handles one row
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_cols
    # Load the row and upcast to float32
    x = tl.load(x_ptr + row * n_cols + offsets, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + offsets, mask=mask, other=0.0).to(tl.float32)
    # Root mean square
    ms = tl.sum(x * x, axis=0) / n_cols
    inv = 1.0 / tl.sqrt(ms + eps)
    out = x * inv * w
    # Store the result in the input dtype
    tl.store(out_ptr + row * n_cols + offsets, out.to(out_ptr.dtype.element_ty), mask=mask)


def triton_rmsnorm(x: torch.Tensor, weight: torch.Tensor, eps: float):
    """
    This function wraps the Triton kernel call. It:
      1. Ensures the inputs are contiguous on GPU.
      2. Calculates the grid (blocks) needed.
      3. Launches the Triton kernel.
    """
    x = x.contiguous()
    weight = weight.contiguous()

    # Prepare output tensor
    out = torch.empty_like(x)

    n_cols = x.shape[-1]
    n_rows = x.numel() // n_cols
    BLOCK_SIZE = triton.next_power_of_2(n_cols)  # One block holds a whole row

    # Determine the number of blocks needed
    grid = lambda meta: (n_rows,)

    # Launch the Triton kernel
    rmsnorm_kernel[grid](x, weight, out, n_cols, eps, BLOCK_SIZE=BLOCK_SIZE)
    return out


class ModelNew(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-6) -> None:
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.normal(1.0, 0.1, size=(num_features,), dtype=torch.bfloat16))

    def forward(self, x):
        # Instead of computing in PyTorch, call our Triton-based RMSNorm
        return triton_rmsnorm(x, self.weight, self.eps)
