"""What the app may ask of a run, whichever way the engine is hosted.

``Controller`` is the app's view of a run: state, commands, and a few blocking reads and
writes (called from worker threads, never on the UI's loop). ``evotui.tui.process.EngineProcess``
implements it over the engine's child process; tests use stand-ins. The helpers below run
next to the engine, on its loop, in that child (``evotui.tui.host``).

No Textual here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from evotui.core.metrics import Metrics
from evotui.engine.events import Command

if TYPE_CHECKING:
    from evotui.engine.loop import Engine


class NothingToExport(Exception):
    pass


@dataclass(frozen=True)
class CandidateInfo:
    """A candidate as the details screen shows it (a copy: safe on any thread)."""

    id: str
    source: str
    status: str
    parent_id: str | None = None
    reason: str | None = None
    message: str | None = None
    metrics: Metrics = field(default_factory=Metrics)  # the population's record, as it is
    lineage: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "metrics": self.metrics.to_dict()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CandidateInfo:
        return cls(**{**data, "metrics": Metrics.from_dict(data.get("metrics") or {}),
                      "lineage": tuple(data.get("lineage") or ())})


class Controller(Protocol):
    @property
    def running(self) -> bool: ...

    @property
    def paused(self) -> bool: ...

    @property
    def stopping(self) -> bool: ...

    @property
    def in_flight(self) -> int: ...  # iterations started and not yet recorded

    @property
    def run_dir(self) -> Path | None: ...

    def send(self, command: Command) -> bool: ...

    def toggle_pause(self) -> bool | None: ...

    def add_finished_callback(self, fn: Callable[[], None]) -> None: ...

    def candidate(self, cid: str) -> CandidateInfo | None: ...

    def export_best(self) -> tuple[str, Path]: ...

    def accept_advice(self, advice_id: str) -> Any: ...

    def veto_advice(self, advice_id: str) -> Any: ...

    def author_advice(self, text: str, **fields: Any) -> Any: ...


# ---- run next to the engine (on its loop) -------------------------------------------------------
def candidate_info(engine: Engine, cid: str) -> CandidateInfo | None:
    from evotui.engine.report import lineage

    pop = engine.population
    if cid not in pop:
        return None
    c = pop.get(cid)
    return CandidateInfo(c.id, c.source, c.status, c.parent_id, c.reason, c.message,
                         c.metrics, tuple(x.id for x in lineage(engine, c)))


def best_program(engine: Engine) -> tuple[str, str]:
    """(id, text of best.py) for the best candidate so far."""
    from evotui.engine import report as reporting

    best = engine.best
    if best is None:
        raise NothingToExport("no accepted candidate yet")
    return best.id, reporting.best_file(engine.report(), best.source)


def advice_defaults(engine: Engine) -> dict[str, str]:
    """What the New advice form starts with: this task's kind and tags, this GPU's arch."""
    meta = engine.task.meta
    return {"kind": meta.kind or "general", "tags": ", ".join(meta.tags),
            "arch": str(engine.device_info.get("arch") or "")}


def library_hook() -> Any:
    """The advice library when no engine is there to go through (EVOTUI_HOME)."""
    from evotui.memory.hook import MemoryHook
    from evotui.memory.store import AdviceStore

    return MemoryHook(AdviceStore(), k=0)


def advice_hook(engine: Engine | None, method: str) -> Any:
    """The engine's own hook when it has ``method``, else None."""
    hook = engine.memory if engine is not None else None
    return hook if hook is not None and callable(getattr(hook, method, None)) else None


def advice_summary(advice: Any) -> dict[str, Any]:
    get = advice.get if isinstance(advice, dict) else lambda k: getattr(advice, k, None)
    return {"id": str(get("id") or ""), "status": get("status"), "text": get("text")}
