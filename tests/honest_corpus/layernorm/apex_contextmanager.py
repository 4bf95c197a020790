"""LayerNorm with a device guard written as a `contextlib.contextmanager` (as apex-like
fused-kernel modules do), the kernel keeping the whole row in registers and using
`tl.math.rsqrt`, weights read once per program with `eviction_policy`."""

import contextlib
from collections import namedtuple

import torch
import torch.nn as nn
import triton
import triton.language as tl

LaunchConfig = namedtuple("LaunchConfig", ["block", "num_warps"])


@contextlib.contextmanager
def on_device(t: torch.Tensor):
    if t.is_cuda:
        with torch.cuda.device(t.device):
            yield
    else:
        yield


def launch_config(n_cols: int) -> LaunchConfig:
    block = triton.next_power_of_2(n_cols)
    return LaunchConfig(block=block, num_warps=min(max(block // 256, 1), 16))


@triton.jit
def fused_layer_norm_fwd(X, W, B, Y, stride_x, stride_y, N, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    x = tl.load(X + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(W + cols, mask=mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
    b = tl.load(B + cols, mask=mask, other=0.0, eviction_policy="evict_last").to(tl.float32)
    mu = tl.sum(x, axis=0) / N
    diff = tl.where(mask, x - mu, 0.0)
    sigma2 = tl.sum(diff * diff, axis=0) / N
    inv = tl.math.rsqrt(sigma2 + eps)
    tl.store(Y + row * stride_y + cols, (diff * inv * w + b).to(Y.dtype.element_ty), mask=mask)


class FusedLayerNorm(nn.Module):
    def __init__(self, normalized_shape: int, eps: float = 1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.normal(1.0, 0.1, size=(normalized_shape,), dtype=torch.bfloat16))
        self.bias = nn.Parameter(torch.normal(0.0, 0.1, size=(normalized_shape,), dtype=torch.bfloat16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.shape[-1]
        x2 = x.contiguous().view(-1, n)
        y = torch.empty_like(x2)
        cfg = launch_config(n)
        with on_device(x2):
            fused_layer_norm_fwd[(x2.shape[0],)](x2, self.weight, self.bias, y, x2.stride(0),
                                                 y.stride(0), n, self.eps, BLOCK=cfg.block,
                                                 num_warps=cfg.num_warps)
        return y.view_as(x)


class ModelNew(FusedLayerNorm):
    pass
