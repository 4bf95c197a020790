"""RMSNorm over fp16 rows in the style of attorch's `rms_norm_kernels.py`: autotuned over
`warps_kernel_configs()`, block sizes from `triton.heuristics` (`BLOCK_SIZE_BATCH_heuristic`,
`next_power_of_2` of the feature dim), a 2-D block of rows, `scale_by_weight` and
`save_stats` flags as constexprs."""

from typing import Dict, List, Optional

import torch
import torch.nn as nn
import triton
import triton.language as tl
from torch import Tensor
from triton import next_power_of_2


def warps_kernel_configs() -> List[triton.Config]:
    return [triton.Config({}, num_warps=2 ** i) for i in range(6)]


def BLOCK_SIZE_BATCH_heuristic(args: Dict) -> int:
    return (min(max(1, next_power_of_2(args["batch_dim"] // 2 ** 10)), 128)
            if args["feat_dim"] < 64 else 1)


@triton.autotune(
    configs=warps_kernel_configs(),
    key=["batch_dim", "feat_dim"],
    restore_value=["inv_rms_pointer"],
)
@triton.heuristics({
    "BLOCK_SIZE_BATCH": BLOCK_SIZE_BATCH_heuristic,
    "BLOCK_SIZE_FEAT": lambda args: next_power_of_2(args["feat_dim"]),
})
@triton.jit
def rms_norm_forward_kernel(
    input_pointer, weight_pointer,
    inv_rms_pointer, output_pointer,
    batch_dim, feat_dim,
    input_batch_stride, input_feat_stride,
    output_batch_stride, output_feat_stride,
    eps,
    scale_by_weight: tl.constexpr, save_stats: tl.constexpr,
    BLOCK_SIZE_BATCH: tl.constexpr, BLOCK_SIZE_FEAT: tl.constexpr,
):
    """
    Root-mean-square-normalizes the input.

    Args:
        input_pointer: Pointer to the input to layer-normalize.
            The input must be of shape [batch_dim, feat_dim].
        weight_pointer: Pointer to optional weights for affine transform.
        inv_rms_pointer: Pointer to an optional container the input's inverse
            root mean square is written to if save_stats is True.
        scale_by_weight: Flag for scaling the normalized output by weights.
        save_stats: Flag for saving the root mean square.
    """
    batch_pid = tl.program_id(axis=0)

    batch_offset = batch_pid * BLOCK_SIZE_BATCH + tl.arange(0, BLOCK_SIZE_BATCH)
    feat_offset = tl.arange(0, BLOCK_SIZE_FEAT)

    batch_mask = batch_offset < batch_dim
    feat_mask = feat_offset < feat_dim

    input_pointer += (input_batch_stride * batch_offset[:, None] +
                      input_feat_stride * feat_offset[None, :])
    output_pointer += (output_batch_stride * batch_offset[:, None] +
                       output_feat_stride * feat_offset[None, :])

    input = tl.load(input_pointer,
                    mask=batch_mask[:, None] & feat_mask[None, :]).to(tl.float32)
    inv_rms = tl.rsqrt(tl.sum(input * input, axis=1) / feat_dim + eps)
    output = input * inv_rms[:, None]

    if save_stats:
        tl.store(inv_rms_pointer + batch_offset, inv_rms, mask=batch_mask)

    if scale_by_weight:
        weight = tl.load(weight_pointer + feat_offset, mask=feat_mask)
        output *= weight.to(tl.float32)

    tl.store(output_pointer, output,
             mask=batch_mask[:, None] & feat_mask[None, :])


class RMSNormAutoGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input: Tensor, weight: Optional[Tensor] = None,
                eps: float = 1e-6) -> Tensor:
        scale_by_weight = weight is not None
        requires_grad = (input.requires_grad or
                         (scale_by_weight and weight.requires_grad))

        flattened_input = input.unsqueeze(0) if input.ndim == 1 else input
        flattened_input = flattened_input.flatten(0, -2)
        batch_dim, feat_dim = flattened_input.shape

        output = torch.empty_like(flattened_input)
        inv_rms = torch.empty(batch_dim, device=input.device, dtype=torch.float32) \
            if requires_grad else None

        grid = lambda META: (triton.cdiv(batch_dim, META["BLOCK_SIZE_BATCH"]),)
        rms_norm_forward_kernel[grid](flattened_input, weight, inv_rms, output,
                                      *flattened_input.shape,
                                      *flattened_input.stride(), *output.stride(),
                                      eps,
                                      scale_by_weight=scale_by_weight,
                                      save_stats=requires_grad)

        ctx.scale_by_weight = scale_by_weight
        if requires_grad:
            ctx.save_for_backward(flattened_input, weight, inv_rms)
        return output.view_as(input)


class ModelNew(nn.Module):
    def __init__(self, num_features: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.normal(1.0, 0.1, size=(num_features,), dtype=torch.float16))

    def forward(self, input: Tensor) -> Tensor:
        return RMSNormAutoGrad.apply(input, self.weight, self.eps)
