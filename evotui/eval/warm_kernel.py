"""The harness's own kernel, launched once by the trusted process that fills the compiler
cache (``evotui.eval.compiler_cache``); never candidate code."""

from __future__ import annotations

from typing import Any

import triton
import triton.language as tl


@triton.jit
def _add_one(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=mask) + 1.0, mask=mask)


def launch_once(device: Any) -> None:
    import torch

    x = torch.zeros(1024, device=device)
    _add_one[(4,)](x, x.numel(), BLOCK=256)
    torch.cuda.synchronize(device)
    if float(x.sum()) != 1024.0:
        raise RuntimeError("the warm-up kernel computed a wrong sum")
