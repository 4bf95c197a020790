"""How a product family's ``tl.dot`` treats fp32 operands (the GEMM and convolution
templates)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evotui.seed.common import Tunable


@dataclass(frozen=True)
class DotPrecision:
    """How a product family's ``tl.dot`` treats fp32 operands: IEEE products by default
    (plain ``tl.dot`` uses TF32 on NVIDIA GPUs, outside a 1e-4 tolerance), and a ``TF32X3``
    knob for the search: three TF32 products, about fp32's accuracy on the tensor cores. Text
    for the kernel's parameters, its ``tl.dot`` call and its launch; empty for other dtypes."""

    param: str = ""
    dot: str = ""
    launch: str = ""
    tunables: tuple[Tunable, ...] = ()

    @classmethod
    def of(cls, dtype: Any) -> DotPrecision:
        import torch

        if dtype != torch.float32:
            return cls()
        return cls(", PRECISION: tl.constexpr", ", input_precision=PRECISION",
                   ', PRECISION="tf32x3" if TF32X3 else "ieee"', (Tunable("TF32X3", 0, [0, 1]),))
