"""What the app may ask of a run, whichever way the engine is hosted.

``Controller`` is the app's view of a run: state, commands, and a few blocking reads and
writes (called from worker threads, never on the UI's loop). ``evotui.tui.process.EngineProcess``
implements it over the engine's child process; tests use stand-ins. The helpers below run
next to the engine, on its loop, in that child (``evotui.tui.host``).

No Textual here.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evotui.core.advice_library import AdviceLibrary
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


class Controller(ABC):
    """``EngineProcess`` and the tests' stand-ins subclass it. Every member is always there:
    a controller without a feature keeps the default, which says so (None, nothing), so
    the app never asks whether one exists."""

    @property
    @abstractmethod
    def running(self) -> bool: ...

    @property
    @abstractmethod
    def paused(self) -> bool: ...

    @property
    @abstractmethod
    def stopping(self) -> bool: ...

    @property
    @abstractmethod
    def run_dir(self) -> Path | None: ...

    @property
    def in_flight(self) -> int | None:
        """Iterations started and not yet recorded, as the engine counts them; None (the
        default) when this controller does not know (the feed's count stands in)."""
        return None

    @property
    def error(self) -> str | None:
        """The engine's traceback when it stopped with an error (the default: None)."""
        return None

    @abstractmethod
    def send(self, command: Command) -> bool: ...

    @abstractmethod
    def toggle_pause(self) -> bool | None:
        """Pause or resume: True when pausing, False when resuming, None when the run is
        over (nothing to pause)."""

    @abstractmethod
    def add_finished_callback(self, fn: Callable[[], None]) -> None: ...

    @abstractmethod
    def candidate(self, cid: str) -> CandidateInfo | None: ...

    @abstractmethod
    def export_best(self) -> tuple[str, Path]: ...

    def advice_defaults(self) -> dict[str, str]:
        """What the New advice form starts with (the default: nothing filled in)."""
        return {}

    # the advice decided or written, as ``advice_summary`` has it ("id", "status", "text")
    @abstractmethod
    def accept_advice(self, advice_id: str) -> dict[str, Any]: ...

    @abstractmethod
    def veto_advice(self, advice_id: str) -> dict[str, Any]: ...

    @abstractmethod
    def author_advice(self, text: str, **fields: Any) -> dict[str, Any]: ...


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


def library_hook() -> AdviceLibrary:
    """The advice library when no engine is there to go through (EVOTUI_HOME)."""
    from evotui.memory.hook import MemoryHook
    from evotui.memory.store import AdviceStore

    return MemoryHook(AdviceStore(), k=0)


def advice_hook(engine: Engine | None) -> AdviceLibrary | None:
    """The engine's own library when it takes the human's decisions, else None."""
    hook = engine.memory if engine is not None else None
    return hook if hook is not None and hook.decides else None


def advice_summary(advice: Any) -> dict[str, Any]:
    get = advice.get if isinstance(advice, dict) else lambda k: getattr(advice, k, None)
    return {"id": str(get("id") or ""), "status": get("status"), "text": get("text")}
