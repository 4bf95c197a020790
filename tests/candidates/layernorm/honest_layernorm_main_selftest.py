"""LayerNorm forward (bf16 in/out, fp32 statistics), with a self-test under
`if __name__ == "__main__":` as kernel authors usually ship one."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def layernorm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, n_cols, stride, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    xc = tl.where(mask, x - mean, 0.0)
    var = tl.sum(xc * xc, axis=0) / n_cols
    rstd = tl.math.rsqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * stride + cols, (xc * rstd * w + b).to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self, normalized_shape: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.normal(1.0, 0.1, size=(normalized_shape,), dtype=torch.bfloat16))
        self.bias = nn.Parameter(torch.normal(0.0, 0.1, size=(normalized_shape,), dtype=torch.bfloat16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n_rows, n_cols = x.shape
        layernorm_kernel[(n_rows,)](x, self.weight, self.bias, y, n_cols, x.stride(0), self.eps,
                                    BLOCK=triton.next_power_of_2(n_cols))
        return y


if __name__ == "__main__":
    torch.manual_seed(0)
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    m = ModelNew(4096).to(dev)
    x = torch.randn(64, 4096, dtype=torch.bfloat16, device=dev)
    ref = torch.nn.functional.layer_norm(x.float(), (4096,), m.weight.float(), m.bias.float(), 1e-5)
    torch.testing.assert_close(m(x).float(), ref, atol=1e-2, rtol=1e-2)
    print("ok")
