"""LayerNorm as a subclass of nn.LayerNorm (its parameters, eps and normalized_shape reused)
with a Triton forward keeping nn.LayerNorm's forward signature (the argument is called input)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def ln_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    d = tl.where(mask, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * stride + cols, (d * rstd * w + b).to(tl.bfloat16), mask=mask)


class ModelNew(nn.LayerNorm):
    def __init__(self, normalized_shape: int, eps: float = 1e-5):
        super().__init__(normalized_shape, eps=eps, elementwise_affine=True, dtype=torch.bfloat16)
        self.weight = nn.Parameter(torch.normal(1.0, 0.1, size=(normalized_shape,), dtype=torch.bfloat16))
        self.bias = nn.Parameter(torch.normal(0.0, 0.1, size=(normalized_shape,), dtype=torch.bfloat16))

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        # same signature as nn.LayerNorm.forward(self, input)
        n = self.normalized_shape[0]
        x2 = input.reshape(-1, n)
        y = torch.empty_like(x2)
        ln_kernel[(x2.shape[0],)](x2, self.weight, self.bias, y, n, x2.stride(0), self.eps,
                                  BLOCK=triton.next_power_of_2(n))
        return y.view(input.shape)
