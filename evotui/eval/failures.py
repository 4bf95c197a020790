"""How a candidate's evaluation fails on the candidate side: ``CandidateFailure`` (a reason,
a message, whether the worker must go), the short traceback a model is shown, and what a
failure raised deep inside the candidate's call was caused by."""

from __future__ import annotations

import traceback
from collections.abc import Iterator
from typing import Any


class CandidateFailure(Exception):
    def __init__(self, reason: str, message: str, restart: bool = False) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.restart = restart


def short_traceback(exc: BaseException, filename: str) -> str:
    """The exception and the candidate's own frames: what the model needs to fix it."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == filename]
    where = f" (line {frames[-1].lineno}: {frames[-1].line})" if frames else ""
    text = f"{type(exc).__name__}: {exc}{where}"
    return text[:2000]


def causes(e: BaseException) -> Iterator[BaseException]:
    """``e`` and what it was raised from (the Triton interpreter wraps what a kernel raised)."""
    seen: BaseException | None = e
    for _ in range(8):
        if seen is None:
            return
        yield seen
        seen = seen.__cause__ or seen.__context__


def harness_failure(e: BaseException) -> CandidateFailure | None:
    """A check of ours that fired inside the candidate's call (a patched harness)."""
    return next((c for c in causes(e) if type(c) is CandidateFailure), None)


def named_reason(e: BaseException) -> str | None:
    """The reason a harness check raised inside the candidate's call carries."""
    return next((type(c).reason for c in causes(e)
                 if type(c).__module__.startswith("evotui.dialects.") and hasattr(type(c), "reason")),
                None)


def bands_damaged(bands: list[tuple[str, Any]], trial_seed: int) -> bool:
    from evotui.dialects.cuda.guards import pattern

    return any(not band.cpu().equal(pattern(trial_seed, k, band.numel()))
               for k, (_, band) in enumerate(bands))
