"""Linear + ReLU in the style of attorch's `linear_kernels.py`: `triton.heuristics` for
`EVEN_K`-style divisibility flags, `allow_tf32` / `fp16` / `act_func` as constexprs, the
activation applied in an `apply_act_func` helper, an autograd Function `LinearAutoGrad`."""

from typing import List, Optional

import torch
import torch.nn as nn
import triton
import triton.language as tl
from torch import Tensor


def linear_forward_config(BLOCK_SIZE_BATCH: int, BLOCK_SIZE_IN_FEAT: int,
                          BLOCK_SIZE_OUT_FEAT: int, GROUP_SIZE_BATCH: int = 8,
                          n_warps: int = 4, n_stages: int = 2) -> triton.Config:
    return triton.Config({"BLOCK_SIZE_BATCH": BLOCK_SIZE_BATCH,
                          "BLOCK_SIZE_IN_FEAT": BLOCK_SIZE_IN_FEAT,
                          "BLOCK_SIZE_OUT_FEAT": BLOCK_SIZE_OUT_FEAT,
                          "GROUP_SIZE_BATCH": GROUP_SIZE_BATCH},
                         num_warps=n_warps, num_stages=n_stages)


def configs() -> List[triton.Config]:
    return [linear_forward_config(32, 32, 32, n_warps=2, n_stages=2),
            linear_forward_config(64, 32, 64, n_warps=4, n_stages=3)]


@triton.jit
def apply_act_func(input, act_func: tl.constexpr):
    if act_func == "relu":
        output = tl.maximum(0, input)
    elif act_func == "leaky_relu":
        output = tl.where(input > 0, input, 0.01 * input)
    else:
        output = input
    return output


@triton.autotune(configs=configs(), key=["batch_dim", "in_feat_dim", "out_feat_dim"])
@triton.heuristics({
    "K_TAIL": lambda args: args["in_feat_dim"] % args["BLOCK_SIZE_IN_FEAT"] != 0,
})
@triton.jit
def linear_forward_kernel(
    input_pointer, weight_pointer, bias_pointer, output_pointer,
    batch_dim, in_feat_dim, out_feat_dim,
    input_batch_stride, input_in_feat_stride,
    weight_in_feat_stride, weight_out_feat_stride,
    output_batch_stride, output_out_feat_stride,
    add_bias: tl.constexpr, act_func: tl.constexpr,
    allow_tf32: tl.constexpr, fp16: tl.constexpr,
    BLOCK_SIZE_BATCH: tl.constexpr, BLOCK_SIZE_IN_FEAT: tl.constexpr,
    BLOCK_SIZE_OUT_FEAT: tl.constexpr, GROUP_SIZE_BATCH: tl.constexpr,
    K_TAIL: tl.constexpr,
):
    """
    Linearly transforms the input using weights, optionally adding bias
    and fusing an activation function.
    """
    pid = tl.program_id(axis=0)
    n_batch_pids = tl.cdiv(batch_dim, BLOCK_SIZE_BATCH)
    n_out_feat_pids = tl.cdiv(out_feat_dim, BLOCK_SIZE_OUT_FEAT)
    pids_per_group = GROUP_SIZE_BATCH * n_out_feat_pids
    group_id = pid // pids_per_group
    first_batch_pid = group_id * GROUP_SIZE_BATCH
    GROUP_SIZE_BATCH = min(n_batch_pids - first_batch_pid, GROUP_SIZE_BATCH)
    batch_pid = first_batch_pid + ((pid % pids_per_group) % GROUP_SIZE_BATCH)
    out_feat_pid = (pid % pids_per_group) // GROUP_SIZE_BATCH

    batch_offset = (batch_pid * BLOCK_SIZE_BATCH + tl.arange(0, BLOCK_SIZE_BATCH))
    out_feat_offset = (out_feat_pid * BLOCK_SIZE_OUT_FEAT + tl.arange(0, BLOCK_SIZE_OUT_FEAT))

    batch_mask = batch_offset < batch_dim
    out_feat_mask = out_feat_offset < out_feat_dim

    input_pointer += input_batch_stride * batch_offset[:, None]
    weight_pointer += weight_out_feat_stride * out_feat_offset[None, :]

    accum = tl.zeros((BLOCK_SIZE_BATCH, BLOCK_SIZE_OUT_FEAT), dtype=tl.float32)

    for block_ind in range(0, tl.cdiv(in_feat_dim, BLOCK_SIZE_IN_FEAT)):
        in_feat_offset = (block_ind * BLOCK_SIZE_IN_FEAT + tl.arange(0, BLOCK_SIZE_IN_FEAT))
        in_feat_mask = in_feat_offset < in_feat_dim

        curr_input_pointer = input_pointer + input_in_feat_stride * in_feat_offset[None, :]
        curr_weight_pointer = weight_pointer + weight_in_feat_stride * in_feat_offset[:, None]

        input_block = tl.load(curr_input_pointer,
                              mask=batch_mask[:, None] & in_feat_mask[None, :], other=0.0)
        weight_block = tl.load(curr_weight_pointer,
                               mask=out_feat_mask[None, :] & in_feat_mask[:, None], other=0.0)

        if fp16:
            input_block = input_block.to(tl.float16)
            weight_block = weight_block.to(tl.float16)

        accum += tl.dot(input_block, weight_block, allow_tf32=allow_tf32)

    if add_bias:
        bias = tl.load(bias_pointer + out_feat_offset, mask=out_feat_mask)
        accum += bias[None, :].to(tl.float32)

    accum = apply_act_func(accum, act_func)

    output_pointer += (output_batch_stride * batch_offset[:, None] +
                       output_out_feat_stride * out_feat_offset[None, :])
    tl.store(output_pointer, accum, mask=batch_mask[:, None] & out_feat_mask[None, :])


class LinearAutoGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, input: Tensor, weight: Tensor, bias: Optional[Tensor] = None,
                act_func: Optional[str] = None) -> Tensor:
        assert weight.ndim == 2
        assert bias is None or bias.ndim == 1
        flattened_input = input.flatten(0, -2) if input.ndim > 2 else input
        batch_dim, in_feat_dim = flattened_input.shape
        out_feat_dim = weight.shape[0]
        output = torch.empty((batch_dim, out_feat_dim), device=input.device, dtype=input.dtype)
        grid = lambda META: (triton.cdiv(batch_dim, META["BLOCK_SIZE_BATCH"]) *
                             triton.cdiv(out_feat_dim, META["BLOCK_SIZE_OUT_FEAT"]),)
        linear_forward_kernel[grid](flattened_input, weight, bias, output,
                                    batch_dim, in_feat_dim, out_feat_dim,
                                    *flattened_input.stride(), *weight.t().stride(),
                                    *output.stride(),
                                    add_bias=bias is not None, act_func=act_func or "",
                                    allow_tf32=False, fp16=False)
        ctx.act_func = act_func
        return output.view(*input.shape[:-1], out_feat_dim)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features, bias=True, dtype=torch.bfloat16)

    def forward(self, input: Tensor) -> Tensor:
        return LinearAutoGrad.apply(input, self.linear.weight, self.linear.bias, "relu")
