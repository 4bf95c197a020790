"""What every backend provides: ``Backend`` (the parent's and the worker's view of a dialect)
and ``Recorder`` (its launch recorder, in the worker). Every member is declared here; a
dialect without a feature keeps the default, which says so, so the harness never asks
whether a method exists."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any


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


class Recorder(ABC):
    """Counts a dialect's kernel launches in the worker, and can skip them (ghost replay)."""

    launches: Counter[str]  # launches by kernel name since the last ``reset``
    ghost: bool  # when True, kernel launches are skipped
    on_enter: Callable[[], None]  # called around the candidate's kernels (the op policy)
    on_exit: Callable[[], None]
    # guard bands around the buffers the harness allocates (``arm_guards``/``take_guards``):
    # only dialects whose harness allocates them (CUDA C)
    guards_buffers: bool = False
    # a dialect compiling in the worker applies its compiled-code rules (CUDA C: the PTX
    # rules) unless the pool was made with static_checks=False
    check_ptx: bool = True

    @abstractmethod
    def install(self) -> None:
        """Put the hooks in place (once per worker)."""

    @abstractmethod
    def reset(self) -> None:
        """Forget the launches counted so far."""

    @property
    @abstractmethod
    def total(self) -> int:
        """Launches since the last ``reset``."""

    def approve(self, filename: str, source: str) -> None:
        """The candidate file as the static rules checked it, before it is imported (the
        default, for dialects whose candidates are not imported: nothing to approve)."""
        return None

    def arm_guards(self, seed: int) -> None:
        """Surround the buffers of the next checked call with guard bands from ``seed``
        (the default: no bands, see ``guards_buffers``)."""
        return None

    def take_guards(self) -> list[tuple[str, Any]]:
        """The (label, band) pairs of the last checked call; disarms (the default: none)."""
        return []


class Backend(ABC):
    name: str
    prompt_dir: Path  # system prompt, examples and pitfalls as template files
    # no CPU evaluation at all: a CPU pool refuses its candidates (``needs_gpu``)
    needs_gpu: bool = False

    @abstractmethod
    def check_source(self, source: str) -> StaticIssue | None:
        """Static rules, run before any candidate code executes."""

    @abstractmethod
    def launch_recorder(self) -> Recorder:
        """A recorder that counts the dialect's kernel launches (worker side)."""

    @abstractmethod
    def tolerances(self, dtype: str) -> tuple[float, float]:
        """Default (atol, rtol) for an output dtype."""

    def precheck(self, source: str, arch: str) -> StaticIssue | None:
        """A check in the parent beyond the static rules, for ``arch`` (CUDA C: a compile);
        None when it passes (the default: nothing more to check)."""
        return None

    def model_class(self, source: str, task_module: Any, recorder: Any) -> type | None:
        """The harness-built ModelNew of a dialect whose candidates are not Python modules
        (CUDA C: compiled from the candidate's declarations, nothing of it executed as
        Python); None when the candidate is a module the harness imports (the default)."""
        return None
