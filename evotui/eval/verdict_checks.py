"""What the judge checks of a worker's report before it reads any output: that it answers
the request (its trials and seeds) and that the weights stayed as they were. ``Reject``
carries a verdict's reason and message."""

from __future__ import annotations

from collections.abc import Sequence

from evotui.core import reasons
from evotui.eval.messages import Details, Report, Request


class Reject(Exception):
    def __init__(self, reason: str, message: str, details: Details | None = None) -> None:
        super().__init__(message)
        self.reason, self.message, self.details = reason, message, details or Details()


def check_request_answered(req: Request, report: Report) -> None:
    """The worker must have run exactly what was asked, with the seeds it was given: a report
    that a tampered worker made up (no trials, other seeds) is rejected. (A report without
    timing is rejected in ``_judge`` once the trials pass: a trial that damaged its guard
    bands is legitimately left untimed.)"""
    asked = [(t.seed, t.shape) for t in req.trials]
    got = [(t.seed, t.shape) for t in report.trials]
    if got != asked:
        raise Reject(reasons.TAMPERED, f"the report holds {len(got)} trials, not the {len(asked)} asked for")
    timing = report.timing
    if timing is not None:
        sets = [e.seed for e in timing.inputs_after]
        if (sets != req.timed_seeds or timing.seed not in req.timed_seeds
                or (timing.recheck.seed, timing.verify.seed) != (req.recheck_seed, req.verify_seed)):
            raise Reject(reasons.TAMPERED, "the timing report answers other seeds")
    if report.ghost is None or report.ghost.seed != req.ghost_seed:
        raise Reject(reasons.TAMPERED, "the ghost-replay report is missing or answers another seed")


def check_weights(changed: Sequence[str]) -> None:
    """The parameters a model's kernels wrote into between timed calls (weight_guard)."""
    if changed:
        names = ", ".join(f"`{n}`" for n in changed[:5])
        raise Reject(reasons.MODIFIED_INPUTS,
                     f"the model's parameters changed between timed calls ({names}): a kernel "
                     "wrote into them, which can keep state from one call to the next; keep "
                     "scratch memory in a buffer (register_buffer) or allocate it per call")
