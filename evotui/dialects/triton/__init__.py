"""The Triton dialect: candidates are Python modules whose arithmetic runs in ``@triton.jit``
kernels, on CUDA or on the CPU through Triton's interpreter."""

from __future__ import annotations

from pathlib import Path

from evotui.dialects.base import Backend, StaticIssue
from evotui.dialects.tolerances import default_tolerances
from evotui.dialects.triton.launch_hooks import LaunchRecorder
from evotui.dialects.triton.static_rules import check_source


class TritonBackend(Backend):
    name = "triton"
    prompt_dir = Path(__file__).parent / "prompts"

    def check_source(self, source: str) -> StaticIssue | None:
        return check_source(source)

    def launch_recorder(self) -> LaunchRecorder:
        return LaunchRecorder()

    def tolerances(self, dtype: str) -> tuple[float, float]:
        return default_tolerances(dtype)
