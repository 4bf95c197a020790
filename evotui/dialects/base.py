"""What every backend provides."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol


@dataclass(frozen=True)
class StaticIssue:
    reason: str
    message: str
    line: int


class CandidateError(Exception):
    """A failure a backend attributes to the candidate, with its reason code (worker side:
    e.g. ``compile_error`` when a CUDA candidate's device code does not compile)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason, self.message = reason, message


class Backend(Protocol):
    name: str
    prompt_dir: Path  # system prompt, examples and pitfalls as template files

    def check_source(self, source: str) -> StaticIssue | None:
        """Static rules, run before any candidate code executes."""

    def launch_recorder(self) -> Any:
        """A recorder that counts the dialect's kernel launches (worker side)."""

    def tolerances(self, dtype: str) -> tuple[float, float]:
        """Default (atol, rtol) for an output dtype."""

    # Optional, for dialects whose candidates are not Python modules (the CUDA backend):
    #   needs_gpu: bool                                    no CPU evaluation at all
    #   precheck(source, arch) -> StaticIssue | None      parent-side compile check
    #   model_class(source, task_module, recorder) -> type  the harness-built ModelNew
    # The Triton backend has none of them: its candidates are imported as Python.
