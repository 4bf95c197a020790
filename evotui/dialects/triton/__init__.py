"""The Triton dialect: candidates are Python modules whose arithmetic runs in ``@triton.jit``
kernels, on CUDA or on the CPU through Triton's interpreter."""

from __future__ import annotations

from pathlib import Path

from evotui.dialects.base import StaticIssue
from evotui.dialects.triton.launch_hooks import LaunchRecorder
from evotui.dialects.triton.static_rules import check_source

# KernelBench-style tolerances: tight for fp32, loose for 16-bit floats.
_TOLERANCES = {
    "torch.float64": (1e-7, 1e-7),
    "torch.float32": (1e-4, 1e-4),
    "torch.bfloat16": (1e-2, 1e-2),
    "torch.float16": (1e-2, 1e-2),
}


class TritonBackend:
    name = "triton"
    prompt_dir = Path(__file__).parent / "prompts"

    def check_source(self, source: str) -> StaticIssue | None:
        return check_source(source)

    def launch_recorder(self) -> LaunchRecorder:
        return LaunchRecorder()

    def tolerances(self, dtype: str) -> tuple[float, float]:
        return _TOLERANCES.get(dtype, (0.0, 0.0))
