"""Softmax in the style of attorch: `warps_kernel_configs()` for `triton.autotune`,
`triton.heuristics` that size a 2-D (batch x feature) block, a `log` flag as a constexpr, and
an autograd Function around the launch."""

from typing import Dict, List

import torch
import torch.nn as nn
import triton
import triton.language as tl
from torch import Tensor
from triton import next_power_of_2


def warps_kernel_configs() -> List[triton.Config]:
    """Returns kernel configurations with all possible number of warps."""
    return [triton.Config({}, num_warps=2 ** i) for i in range(6)]


def BLOCK_SIZE_BATCH_heuristic(args: Dict) -> int:
    """Approximates an appropriate batch block size for softmax using a heuristic."""
    return (min(max(1, next_power_of_2(args["batch_dim"] // 2 ** 10)), 128)
            if args["feat_dim"] < 64 else 1)


@triton.autotune(
    configs=warps_kernel_configs(),
    key=["batch_dim", "feat_dim"],
)
@triton.heuristics({
    "BLOCK_SIZE_BATCH": BLOCK_SIZE_BATCH_heuristic,
    "BLOCK_SIZE_FEAT": lambda args: next_power_of_2(args["feat_dim"]),
})
@triton.jit
def softmax_forward_kernel(
    input_pointer, output_pointer,
    batch_dim, feat_dim,
    input_batch_stride, input_feat_stride,
    output_batch_stride, output_feat_stride,
    log: tl.constexpr,
    BLOCK_SIZE_BATCH: tl.constexpr, BLOCK_SIZE_FEAT: tl.constexpr,
):
    """
    Normalizes the input using softmax.

    Args:
        input_pointer: Pointer to the input to normalize.
            The input must be of shape [batch_dim, feat_dim].
        output_pointer: Pointer to a container the result is written to.
        log: Flag for indicating if the log of softmax should be taken.
        BLOCK_SIZE_BATCH: Block size across the batch dimension.
        BLOCK_SIZE_FEAT: Block size across the feature dimension.
    """
    batch_pid = tl.program_id(axis=0)

    batch_offset = batch_pid * BLOCK_SIZE_BATCH + tl.arange(0, BLOCK_SIZE_BATCH)
    feat_offset = tl.arange(0, BLOCK_SIZE_FEAT)

    batch_mask = batch_offset < batch_dim
    feat_mask = feat_offset < feat_dim

    input_pointer += (input_feat_stride * feat_offset[None, :] +
                      input_batch_stride * batch_offset[:, None])
    output_pointer += (output_feat_stride * feat_offset[None, :] +
                       output_batch_stride * batch_offset[:, None])

    input = tl.load(input_pointer,
                    mask=batch_mask[:, None] & feat_mask[None, :],
                    other=-float("inf")).to(tl.float32)
    input -= tl.max(input, axis=1)[:, None]
    numerator = tl.exp(input)
    denominator = tl.sum(numerator, axis=1)[:, None]

    if log:
        output = input - tl.log(denominator)
    else:
        output = numerator / denominator

    tl.store(output_pointer, output, mask=batch_mask[:, None] & feat_mask[None, :])


class Softmax(torch.autograd.Function):
    """Normalizes the input using softmax."""

    @staticmethod
    def forward(ctx, input: Tensor, log: bool = False) -> Tensor:
        flattened_input = input.unsqueeze(0) if input.ndim == 1 else input
        flattened_input = flattened_input.flatten(0, -2)
        batch_dim, feat_dim = flattened_input.shape

        output = torch.empty_like(flattened_input)

        # Launches 1D grid where each program operates over BLOCK_SIZE_BATCH rows.
        grid = lambda META: (triton.cdiv(batch_dim, META["BLOCK_SIZE_BATCH"]),)
        softmax_forward_kernel[grid](flattened_input, output, batch_dim, feat_dim,
                                     *flattened_input.stride(), *output.stride(),
                                     log=log)

        ctx.log = log
        if input.requires_grad:
            ctx.save_for_backward(output)

        return output.view_as(input)


class ModelNew(nn.Module):
    """Applies softmax to the input along the last dimension."""

    def __init__(self) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return Softmax.apply(input, False)
