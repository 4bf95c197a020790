"""RMSNorm in the style of attorch: a module logger configured in ``__main__``, the
heuristics chosen by helper functions, a ``os.path`` check for a local override of the
block size table, and a debugging hook (``breakpoint()``) behind an environment flag that
the evaluation never sets."""

import logging
import os

import torch
import torch.nn as nn
import triton
import triton.language as tl

log = logging.getLogger(__name__)

_HERE = os.path.dirname(os.path.abspath("attorch_rms_norm.py"))
_HAS_LOCAL_TABLE = os.path.exists(os.path.join(_HERE, "rms_norm_blocks.txt"))


def block_size_heuristic(args):
    return triton.next_power_of_2(args["feat_dim"])


def warps_heuristic(args):
    block = triton.next_power_of_2(args["feat_dim"])
    return 4 if block <= 1024 else 8 if block <= 4096 else 16


@triton.heuristics({"BLOCK_SIZE_FEAT": block_size_heuristic, "num_warps": warps_heuristic})
@triton.jit
def rms_norm_forward_kernel(input_pointer, weight_pointer, output_pointer, feat_dim, eps,
                            BLOCK_SIZE_FEAT: tl.constexpr):
    row = tl.program_id(0)
    offset = tl.arange(0, BLOCK_SIZE_FEAT)
    mask = offset < feat_dim
    x = tl.load(input_pointer + row * feat_dim + offset, mask=mask, other=0.0).to(tl.float32)
    inv_rms = tl.math.rsqrt(tl.sum(x * x, axis=0) / feat_dim + eps)
    w = tl.load(weight_pointer + offset, mask=mask, other=0.0).to(tl.float32)
    out = x * inv_rms * w
    tl.store(output_pointer + row * feat_dim + offset, out.to(output_pointer.dtype.element_ty),
             mask=mask)


def _debug_hook(x: torch.Tensor) -> None:
    if os.environ.get("ATTORCH_DEBUG") == "1":
        log.warning("entering the debugger for a %s input", tuple(x.shape))
        breakpoint()


class ModelNew(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        # initialised as the reference module is (the same draws under the same seed)
        self.weight = nn.Parameter(torch.normal(1.0, 0.1, size=(num_features,),
                                                dtype=torch.bfloat16))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _debug_hook(x)
        flat = x.reshape(-1, x.shape[-1]).contiguous()
        out = torch.empty_like(flat)
        rms_norm_forward_kernel[(flat.shape[0],)](flat, self.weight, out, flat.shape[-1],
                                                  self.eps)
        return out.view_as(x)


if __name__ == "__main__":
    logging.basicConfig(level=logging.DEBUG)
    log.info("local block table: %s", _HAS_LOCAL_TABLE)
    m = ModelNew(4096)
    y = m(torch.randn(8, 4096, dtype=torch.bfloat16))
    log.info("rms of the output: %.4f", y.float().pow(2).mean().sqrt().item())
