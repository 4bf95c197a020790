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


class Backend(Protocol):
    name: str
    prompt_dir: Path  # system prompt, examples and pitfalls as template files

    def check_source(self, source: str) -> StaticIssue | None:
        """Static rules, run before any candidate code executes."""

    def launch_recorder(self) -> Any:
        """A recorder that counts the dialect's kernel launches (worker side)."""

    def tolerances(self, dtype: str) -> tuple[float, float]:
        """Default (atol, rtol) for an output dtype."""
