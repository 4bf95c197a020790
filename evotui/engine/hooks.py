"""What the engine needs from the services below it: an evaluator (``Evaluator``, the
interface every evaluator subclasses: ``evotui.eval.evaluator``) and, optionally, the advice
library (a protocol), so tests and benchmarks can stand in for them."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any, Protocol

from evotui.engine.prompting import format_advice_views
from evotui.eval.evaluator import Evaluator
from evotui.task.model import TaskMeta

__all__ = ["Evaluator", "MemoryHook", "advice_block", "advice_view", "call"]

ADVICE_FIELDS = ("id", "text", "kind", "tags", "status", "arch", "gain", "shown", "improved",
                 "win_rate")


class MemoryHook(Protocol):
    """The advice library as the engine uses it (``evotui.memory.hook.MemoryHook``). Methods
    may be sync (they run in a thread) or async. ``accept(id)``, ``veto(id)`` and
    ``author(text, **fields)`` are optional: the AcceptAdvice/VetoAdvice/AuthorAdvice
    commands are forwarded to them when present. Also optional:
    ``retrieve_tunables(task_meta, parent_source, k)`` (advice the parameter mutator can
    follow; ``retrieve`` stands in) and ``async learn(mutations, ask, min_gain=, summary=)``
    (the end-of-run distillation, ``evotui.engine.distillation``)."""

    def retrieve(self, task_meta: TaskMeta, parent_source: str, k: int) -> list[Any]: ...

    def record_outcome(self, advice_ids: list[str], improved: bool) -> None: ...


async def call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Await an async callable; run a sync one in a thread (it may do disk I/O)."""
    if inspect.iscoroutinefunction(fn):
        return await fn(*args, **kwargs)
    return await asyncio.to_thread(fn, *args, **kwargs)


def advice_view(item: Any) -> dict[str, Any]:
    """A small JSON-able dict (at least ``id`` and ``text``) of a piece of advice, whatever
    type the library returned it as (``evotui.memory.Advice``, a dict, an object)."""
    get = item.get if isinstance(item, dict) else lambda k: getattr(item, k, None)
    view = {k: get(k) for k in ADVICE_FIELDS}
    view = {k: list(v) if isinstance(v, tuple) else v for k, v in view.items() if v is not None}
    view["id"] = str(view.get("id", "?"))
    view["text"] = str(view.get("text", ""))
    return view


def advice_block(items: list[Any], views: list[dict[str, Any]]) -> str:
    """The prompt block: the advice library's own wording when it can format the items."""
    if not items:
        return ""
    try:
        from evotui.memory.prompting import format_advice

        return format_advice(items)
    except Exception:  # not evotui.memory.Advice objects, or no advice library here
        return format_advice_views(views)
