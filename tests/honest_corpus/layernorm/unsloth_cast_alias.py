"""LayerNorm forward in the style of Unsloth's `fast_layernorm`: module-level aliases
(`triton_cast = tl.cast`) a kernel calls, `torch_gpu_device` as a device guard that falls
back to `contextlib.nullcontext`, a `DEVICE_TYPE` chosen with `hasattr(torch, "xpu")`, the
`r` / `mu` row statistics kept, and an `if __name__ == "__main__":` self-test."""

import contextlib

import torch
import torch.nn as nn
import triton
import triton.language as tl

DEVICE_TYPE = "xpu" if hasattr(torch, "xpu") and torch.xpu.is_available() else "cuda"
triton_cast = tl.cast

if DEVICE_TYPE == "xpu":
    torch_gpu_device = torch.xpu.device
elif torch.cuda.is_available():
    torch_gpu_device = torch.cuda.device
else:
    torch_gpu_device = lambda device: contextlib.nullcontext()  # noqa: E731

MAX_FUSED_SIZE: int = 65536
next_power_of_2 = triton.next_power_of_2


def calculate_settings(n: int):
    BLOCK_SIZE: int = next_power_of_2(n)
    if BLOCK_SIZE > MAX_FUSED_SIZE:
        raise RuntimeError(f"Cannot launch Triton kernel since n = {n} exceeds "
                           f"the maximum CUDA blocksize = {MAX_FUSED_SIZE}.")
    num_warps: int = 4
    if BLOCK_SIZE >= 32768:
        num_warps = 32
    elif BLOCK_SIZE >= 8192:
        num_warps = 16
    elif BLOCK_SIZE >= 2048:
        num_warps = 8
    return BLOCK_SIZE, num_warps


@triton.jit
def layernorm_forward(
    Y, Y_row_stride,
    X, X_row_stride,
    W,
    b,
    r,
    mu,
    n_cols: tl.constexpr,
    eps: tl.constexpr,
    BLOCK_SIZE: tl.constexpr,
):
    row_idx = tl.program_id(0)
    col_offsets = tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols

    Y += row_idx * Y_row_stride
    X += row_idx * X_row_stride
    r += row_idx
    mu += row_idx

    # according to https://pytorch.org/torchtune/stable/_modules/torchtune/modules/layer_norm.html#Fp32LayerNorm, all modules
    # are in float32!
    X_row = tl.load(X + col_offsets, mask=mask, other=0).to(tl.float32)
    W_row = tl.load(W + col_offsets, mask=mask, other=0).to(tl.float32)
    b_row = tl.load(b + col_offsets, mask=mask, other=0).to(tl.float32)

    mean_X = tl.sum(X_row, axis=0) / n_cols
    # (X[0] - mean) == -mean so we need to mask it out
    XX = tl.where(mask, X_row - mean_X, 0)
    row_var = tl.sum(XX * XX, axis=0) / n_cols
    inv_var = tl.math.rsqrt(row_var + eps)
    tl.store(r, inv_var)
    tl.store(mu, mean_X)
    output = (XX * inv_var) * W_row + b_row
    tl.store(Y + col_offsets, triton_cast(output, Y.dtype.element_ty), mask=mask)


def fast_layernorm(layernorm, X):
    W = layernorm.weight
    bias = layernorm.bias
    eps = layernorm.variance_epsilon if hasattr(layernorm, "variance_epsilon") else layernorm.eps

    shape = X.shape
    dim = shape[-1]
    X = X.view(-1, dim)
    n_rows, n_cols = X.shape
    BLOCK_SIZE, num_warps = calculate_settings(n_cols)
    device = X.device
    Y = torch.empty((n_rows, n_cols), dtype=X.dtype, device=device)
    r = torch.empty(n_rows, dtype=torch.float32, device=device)
    mu = torch.empty(n_rows, dtype=torch.float32, device=device)

    with torch_gpu_device(device):
        layernorm_forward[(n_rows,)](
            Y, Y.stride(0),
            X, X.stride(0),
            W,
            bias,
            r,
            mu,
            n_cols, eps,
            BLOCK_SIZE=BLOCK_SIZE,
            num_warps=num_warps,
        )
    return Y.view(*shape)


class ModelNew(nn.Module):
    def __init__(self, normalized_shape: int, eps: float = 1e-5):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape, eps=eps, elementwise_affine=True,
                               dtype=torch.bfloat16)
        self.ln.weight = nn.Parameter(torch.normal(1.0, 0.1, size=(normalized_shape,),
                                                   dtype=torch.bfloat16))
        self.ln.bias = nn.Parameter(torch.normal(0.0, 0.1, size=(normalized_shape,),
                                                 dtype=torch.bfloat16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return fast_layernorm(self.ln, x.contiguous())


def test_layernorm(dim=1024, eps=1e-5, dtype=torch.float16, bsz=21, random_state=3407, seqlen=3341):
    torch.manual_seed(random_state)
    layernorm = nn.LayerNorm(dim, eps=eps, dtype=dtype).to(DEVICE_TYPE)
    X = torch.randn((bsz, seqlen, dim), dtype=dtype, device=DEVICE_TYPE)
    Y = layernorm(X)
    Y2 = fast_layernorm(layernorm, X)
    assert torch.dist(Y, Y2).item() <= 0.1


if __name__ == "__main__":
    for dim in [512, 1024, 2048]:
        test_layernorm(dim=dim)
    print("all good")
