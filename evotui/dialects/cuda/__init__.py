"""The CUDA C dialect: a candidate is device code plus a declarative launch spec (README.md in
this folder), never executed as Python. The harness owns all host code: it compiles with
NVRTC, allocates the outputs, and launches through cuda-python on torch's stream.

Importing this package is cheap (no torch, no cuda-python): the parent uses ``check_source``
and ``precheck``; the worker imports ``model`` and ``launcher`` when it builds a ModelNew.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from evotui.core import reasons
from evotui.dialects.base import Backend, StaticIssue
from evotui.dialects.cuda.launch_hooks import CudaLaunchRecorder
from evotui.dialects.cuda.spec import is_cuda_candidate
from evotui.dialects.cuda.static_rules import check_source
from evotui.dialects.tolerances import default_tolerances


class CudaBackend(Backend):
    name = "cuda"
    prompt_dir = Path(__file__).parent / "prompts"
    needs_gpu = True

    def check_source(self, source: str) -> StaticIssue | None:
        return check_source(source)

    def precheck(self, source: str, arch: str) -> StaticIssue | None:
        """Compile with NVRTC in a short-lived subprocess (no GPU needed): compile errors,
        and PTX that breaks ``ptx_rules`` (``forbidden_construct``), are reported before any
        worker runs. None when it compiles, or when this machine has
        no NVRTC (the worker then compiles, and reports, itself)."""
        from evotui.dialects.cuda.compiler import CompileRequest, compile_isolated
        from evotui.dialects.cuda.spec import parse_spec
        from evotui.dialects.cuda.static_rules import readonly_params

        spec = parse_spec(source)
        req = CompileRequest(spec.cuda_source, arch, tuple(sorted(spec.constants.items())),
                             spec.options, tuple(sorted({x.kernel for x in spec.launches})),
                             readonly_params(spec))
        status, message = compile_isolated(req)
        if status == "compile_error":
            return StaticIssue(reasons.COMPILE_ERROR, message, 0)  # lines are CUDA_SOURCE's
        if status == "forbidden":  # the PTX rules: what the compiled code does
            return StaticIssue(reasons.FORBIDDEN_CONSTRUCT, f"CUDA_SOURCE (compiled): {message}", 0)
        if status == "timeout":
            return StaticIssue(reasons.TIMEOUT, message, 0)
        return None

    def launch_recorder(self) -> CudaLaunchRecorder:
        return CudaLaunchRecorder()

    def model_class(self, source: str, task_module: Any, recorder: CudaLaunchRecorder) -> type:
        from evotui.dialects.cuda.model import build_model_class

        return build_model_class(source, task_module, recorder)

    def tolerances(self, dtype: str) -> tuple[float, float]:
        return default_tolerances(dtype)


__all__ = ["CudaBackend", "is_cuda_candidate"]
