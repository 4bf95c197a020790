"""What the engine tells its subscribers (events) and what they tell it (commands).

Events are immutable dataclasses; every one has a ``kind`` string, a wall-clock stamp ``t``
and ``to_dict()`` / ``to_json()`` (one line of JSON, as in ``events.jsonl``). ``event_from_dict``
reads a line back. Commands go into the engine's inbox (``Engine.send``) and take effect
between iterations.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, field, fields
from typing import Any, ClassVar

from evotui.core.metrics import Metrics

LEVELS = ("info", "warning", "error")


@dataclass(frozen=True)
class Event:
    kind: ClassVar[str] = "event"
    # fields holding a ``Metrics`` record, each written flat under its key prefix
    # ("time_ms", "best_time_ms", ...): the JSON keeps the keys it always had
    flat_metrics: ClassVar[tuple[tuple[str, str], ...]] = ()
    t: float = field(default_factory=time.time, kw_only=True)

    def to_dict(self) -> dict[str, Any]:
        d = {"kind": self.kind, **asdict(self)}
        for name, prefix in self.flat_metrics:
            del d[name]
            d.update(getattr(self, name).to_dict(prefix))
        return d

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), default=_jsonable, separators=(",", ":"))


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, set | frozenset):
        return sorted(obj)
    return str(obj)


@dataclass(frozen=True)
class RunStarted(Event):
    kind: ClassVar[str] = "run_started"
    task: str
    task_path: str
    device: str  # "cpu" or "cuda:0, cuda:1"
    interpreter: bool  # CPU interpreter: times are wall times of the interpreter, not speed
    mutator: str  # the mode actually used: "llm" | "param" | "mixed"
    model: str | None
    iterations: int
    run_dir: str | None
    resumed: bool = False
    evaluated: int = 0  # already evaluated children when resumed
    device_name: str = ""  # e.g. "NVIDIA H200" (empty on the CPU)
    arch: str | None = None  # e.g. "sm_90"


@dataclass(frozen=True)
class CandidateProposed(Event):
    kind: ClassVar[str] = "candidate_proposed"
    id: str
    parent_id: str | None
    island: int
    generation: int
    mutator: str  # "seed" | "param" | "llm"
    model: str | None
    description: str
    diff: str  # unified diff parent -> child ('' for the seed)
    advice_ids: tuple[str, ...] = ()
    # the candidate whose program the parent is: the parent itself, or the original when the
    # parent is a copy placed in another island (by seeding or migration)
    parent_origin: str | None = None


@dataclass(frozen=True)
class CandidateEvaluated(Event):
    kind: ClassVar[str] = "candidate_evaluated"
    flat_metrics: ClassVar[tuple[tuple[str, str], ...]] = (("metrics", ""),)
    id: str
    accepted: bool
    reason: str  # a stable code from evotui.core.reasons
    message: str
    metrics: Metrics = field(default_factory=Metrics)  # the verdict's figures
    parent_id: str | None = None
    new_best: bool = False  # the seed, or beat the incumbent by more than the noise margin
    improved: bool = False  # beat its parent by more than the noise margin


@dataclass(frozen=True)
class AdviceRetrieved(Event):
    kind: ClassVar[str] = "advice_retrieved"
    candidate_id: str
    advice: tuple[dict[str, Any], ...]  # each at least {"id", "text"}


@dataclass(frozen=True)
class LLMChunk(Event):
    kind: ClassVar[str] = "llm_chunk"
    candidate_id: str
    text: str


@dataclass(frozen=True)
class GenerationDone(Event):
    kind: ClassVar[str] = "generation_done"
    flat_metrics: ClassVar[tuple[tuple[str, str], ...]] = (("best", "best_"),)
    generation: int
    evaluated: int
    accepted: int  # children, as ``Population.counts`` tallies them
    rejected: int
    best_id: str | None
    best: Metrics  # the best's figures (empty when there is none)
    evals_per_minute: float
    llm_calls: int
    llm_failures: int
    prompt_tokens: int
    completion_tokens: int


@dataclass(frozen=True)
class Status(Event):
    kind: ClassVar[str] = "status"
    message: str
    level: str = "info"  # "info" | "warning" | "error"


@dataclass(frozen=True)
class RunFinished(Event):
    kind: ClassVar[str] = "run_finished"
    outcome: str  # "completed" | "stopped" | "exhausted" | "failed"
    message: str
    evaluated: int
    best_id: str | None
    run_dir: str | None = None


EVENT_TYPES: dict[str, type[Event]] = {
    cls.kind: cls
    for cls in (RunStarted, CandidateProposed, CandidateEvaluated, AdviceRetrieved, LLMChunk,
                GenerationDone, Status, RunFinished)
}


def event_from_dict(data: dict[str, Any]) -> Event:
    """Rebuild an event from ``to_dict()`` output (e.g. a line of ``events.jsonl``)."""
    cls = EVENT_TYPES[data["kind"]]
    known = {f.name for f in fields(cls)}
    kwargs = {k: v for k, v in data.items() if k in known}
    for name, prefix in cls.flat_metrics:
        kwargs[name] = Metrics.from_dict(data, prefix)
    for name in ("advice_ids", "advice"):
        if name in kwargs and isinstance(kwargs[name], list):
            kwargs[name] = tuple(kwargs[name])
    return cls(**kwargs)


# ---- commands ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Command:
    kind: ClassVar[str] = "command"


@dataclass(frozen=True)
class Pause(Command):
    kind: ClassVar[str] = "pause"


@dataclass(frozen=True)
class Resume(Command):
    kind: ClassVar[str] = "resume"


@dataclass(frozen=True)
class Stop(Command):
    """Stop starting new iterations. In-flight evaluations get ``grace_s`` seconds to finish
    and be recorded (0: abandon them at once); then the report is written."""

    kind: ClassVar[str] = "stop"
    grace_s: float = 10.0


@dataclass(frozen=True)
class Hint(Command):
    """A human hint for the next mutation prompts; ``uses`` prompts (None: until cleared).
    An empty text clears every hint."""

    kind: ClassVar[str] = "hint"
    text: str
    uses: int | None = None


@dataclass(frozen=True)
class PinParent(Command):
    """Make an accepted candidate the parent of the next mutation."""

    kind: ClassVar[str] = "pin_parent"
    id: str


@dataclass(frozen=True)
class AcceptAdvice(Command):
    kind: ClassVar[str] = "accept_advice"
    id: str


@dataclass(frozen=True)
class VetoAdvice(Command):
    kind: ClassVar[str] = "veto_advice"
    id: str


@dataclass(frozen=True)
class AuthorAdvice(Command):
    kind: ClassVar[str] = "author_advice"
    text: str
    fields: dict[str, Any] = field(default_factory=dict)  # kind, tags, arch, conditions...


__all__ = [
    "LEVELS", "Event", "RunStarted", "CandidateProposed", "CandidateEvaluated",
    "AdviceRetrieved", "LLMChunk", "GenerationDone", "Status", "RunFinished", "EVENT_TYPES",
    "event_from_dict", "Command", "Pause", "Resume", "Stop", "Hint", "PinParent",
    "AcceptAdvice", "VetoAdvice", "AuthorAdvice",
]
