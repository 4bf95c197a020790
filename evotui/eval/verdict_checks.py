"""What the judge checks of a worker's report before it reads any output: that it answers
the request (its trials and seeds), that the weights stayed as they were, and where the
report's bytes are. ``Reject`` carries a verdict's reason and message."""

from __future__ import annotations

from typing import Any

from evotui.core import reasons


class Reject(Exception):
    def __init__(self, reason: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.reason, self.message, self.details = reason, message, details or {}


def check_request_answered(req: dict[str, Any], report: dict[str, Any],
                                  timing_seeds: list[int]) -> None:
    """The worker must have run exactly what was asked, with the seeds it was given: a report
    that a tampered worker made up (no trials, other seeds) is rejected. (A report without
    timing is rejected in ``_judge`` once the trials pass: a trial that damaged its guard
    bands is legitimately left untimed.)"""
    asked = [(t["seed"], t["shape"]) for t in req["trials"]]
    got = [(t.get("seed"), t.get("shape")) for t in report.get("trials") or []]
    if got != asked:
        raise Reject(reasons.TAMPERED, f"the report holds {len(got)} trials, not the {len(asked)} asked for")
    timing = report.get("timing")
    if timing is not None:
        sets = [e.get("seed") for e in timing.get("inputs_after") or []]
        seeds = ((timing.get("recheck") or {}).get("seed"), (timing.get("verify") or {}).get("seed"))
        if (sets != timing_seeds or timing.get("seed") not in timing_seeds
                or seeds != (req["recheck_seed"], req["verify_seed"])):
            raise Reject(reasons.TAMPERED, "the timing report answers other seeds")
    ghost = report.get("ghost") or {}
    if ghost.get("seed") != req["ghost_seed"]:
        raise Reject(reasons.TAMPERED, "the ghost-replay report is missing or answers another seed")


def check_weights(changed: Any) -> None:
    """The parameters a model's kernels wrote into between timed calls (weight_guard)."""
    if changed:
        names = ", ".join(f"`{n}`" for n in changed[:5]) if isinstance(changed, list) else "?"
        raise Reject(reasons.MODIFIED_INPUTS,
                     f"the model's parameters changed between timed calls ({names}): a kernel "
                     "wrote into them, which can keep state from one call to the next; keep "
                     "scratch memory in a buffer (register_buffer) or allocate it per call")




def blob_paths(report: dict[str, Any]) -> list[str | None]:
    """The sealed memfds the worker received for this report (it sets ``blobs`` itself)."""
    blobs = report.get("blobs")
    if not isinstance(blobs, list):
        return []
    return [b if isinstance(b, str) else None for b in blobs]
