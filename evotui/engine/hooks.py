"""What the engine needs from the services below it: an evaluator (``Evaluator``, the
interface every evaluator subclasses: ``evotui.eval.evaluator``) and, optionally, the advice
library (``AdviceLibrary``, the interface it subclasses: ``evotui.core.advice_library``), so
tests and benchmarks can stand in for them."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

from evotui.core.advice_library import AdviceLibrary
from evotui.engine.prompting import format_advice_views
from evotui.eval.evaluator import Evaluator

__all__ = ["AdviceLibrary", "Evaluator", "advice_block", "advice_view", "call"]

ADVICE_FIELDS = ("id", "text", "kind", "tags", "status", "arch", "gain", "shown", "improved",
                 "win_rate")


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
