"""What the engine and the faces may call on any evaluator: ``EvaluatorPool`` (this
machine's workers), ``DaskEvaluatorPool`` (a cluster's) and the tests' stand-ins all
subclass ``Evaluator``. Every member is always there: an evaluator without a feature keeps
the default, which says so (``None``, or nothing to do), so no caller asks whether a method
exists."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Any, Self

from evotui.eval.results import ABResult, EvalRequest, EvalResult
from evotui.eval.sandbox_state import ELSEWHERE, SandboxState
from evotui.task.model import TaskRef

if TYPE_CHECKING:
    from evotui.dialects.cuda.sanitizer import SanitizerReport


class Evaluator(ABC):
    lanes: list[Any]  # one per candidate evaluated at a time
    devices: list[str]  # as the user sees them: "cpu", "cuda:0", "host/cuda:1"

    @property
    @abstractmethod
    def is_cpu(self) -> bool:
        """Triton's CPU interpreter: times are wall times, not kernel speed."""

    @abstractmethod
    async def aevaluate(self, request: EvalRequest) -> EvalResult:
        """The verdict on one candidate."""

    async def acompare(self, task: TaskRef, incumbent: str, challenger: str,
                       timeout_s: float = 300.0) -> ABResult | None:
        """Two programs timed again, interleaved on one GPU; None where this evaluator cannot
        (the default, and the CPU)."""
        return None

    async def asanitize(self, task: TaskRef, source: str,
                        timeout_s: float = 600.0) -> SanitizerReport | None:
        """compute-sanitizer on a candidate; None where it does not apply (the default)."""
        return None

    def device_facts(self) -> dict[str, Any] | None:
        """The GPU's name and architecture ("name", "arch", …), as a judge reads them (never
        this process); None when unknown (the default)."""
        return None

    def sandbox_state(self) -> SandboxState:
        """What the confinement of candidates means for the user (it may start a worker to
        find out). The default: they run elsewhere, confined by the workers there."""
        return ELSEWHERE

    def start(self) -> None:
        """Start the workers now rather than on first use (the default: none to start)."""
        return None

    def close(self) -> None:
        """Let the workers go; closing twice is harmless (the default: none held)."""
        return None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
