"""The precision the judge checks float32 in. PyTorch lets cuDNN convolutions use TF32 by
default (10-bit mantissa), so on a GPU an eager reference convolution is off by ~1e-3 from
float32, beyond float32's tolerance: a candidate computing in float32 then fails against it.
The judge (reference and baselines) and every candidate process compute float32 as float32;
a candidate may still choose TF32 inside its own kernels, and is judged by the tolerance."""

from __future__ import annotations

from typing import Any


def exact_float32(torch: Any) -> None:
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
