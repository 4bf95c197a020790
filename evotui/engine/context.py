"""What the engine hands its helpers (``advice``, ``proposing``, ``evaluating``, ``bootstrap``,
``checkpoints``, ``report``, ``distillation``): the task of the run and the two callbacks
into the loop. Nothing here imports the loop, so no helper needs to.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from evotui.engine import events as ev
from evotui.engine.task_facts import QueryMeta, TaskFacts, describe_task
from evotui.task.model import TaskRef

Emit = Callable[[ev.Event], None]  # announce an event (log and subscribers)
Finish = Callable[[str, str], None]  # (outcome, message): end the run, the first reason wins


@dataclass(frozen=True)
class RunTask:
    """The task being evolved: its reference, the source text prompts show, and what the judge
    checks (``facts``: the reference traced once, on first use)."""

    ref: TaskRef
    source: str
    device: str  # "cpu" (Triton's interpreter) or "cuda": where the facts are traced

    @classmethod
    def of(cls, ref: TaskRef, interpreter: bool) -> RunTask:
        return cls(ref, ref.source(), "cpu" if interpreter else "cuda")

    @functools.cached_property
    def facts(self) -> TaskFacts:
        return describe_task(self.ref, self.device)

    def query(self) -> QueryMeta:
        """What the advice library is asked by: what the task computes, not its file name."""
        return self.facts.query_meta(self.ref.meta)


__all__ = ["Emit", "Finish", "RunTask"]
