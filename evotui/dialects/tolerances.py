"""Default correctness tolerances by output dtype, the same for every dialect
(KernelBench-style: tight for fp32, loose for 16-bit floats)."""

from __future__ import annotations

TOLERANCES = {
    "torch.float64": (1e-7, 1e-7),
    "torch.float32": (1e-4, 1e-4),
    "torch.bfloat16": (1e-2, 1e-2),
    "torch.float16": (1e-2, 1e-2),
}


def default_tolerances(dtype: str) -> tuple[float, float]:
    """(atol, rtol) for an output dtype such as ``"torch.float32"``; exact for any other."""
    return TOLERANCES.get(dtype, (0.0, 0.0))
