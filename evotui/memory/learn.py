"""After a run: its successful mutations → proposed advice, with an account of what happened.

``distill_mutations`` is what the engine (and ``evotui advice distill RUN_DIR``) calls. For
each mutation with gain > 5 %:

- a change of tunables only → the template (``distill.distill_params``), no model needed;
- otherwise, with a model (``ask``) → one sentence from the model (``distill.distill_llm``),
  at most ``llm_limit`` calls of at most ``llm_timeout`` seconds each, so that the end of a
  run never waits long;
- otherwise (no model, or it failed) → ``fallback_text``: what the mutator said it changed,
  or the first changed line of the diff, with the measured gain and the task.

Children already distilled (their run and id are in some advice's provenance) are skipped,
so distilling a run again, or a resumed run, adds nothing twice. Near-duplicates are merged
(``distill.merge_or_add``). The ``DistillSummary`` says how many were proposed and merged.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from typing import Any

from evotui.memory.distill import (
    MIN_GAIN,
    Ask,
    Mutation,
    distill_llm,
    distill_params,
    gpu_label,
    make_advice,
    merge_or_add,
    task_label,
)
from evotui.memory.model import Advice
from evotui.memory.prompting import pct
from evotui.memory.store import AdviceStore
from evotui.memory.text import suggest_tags

LLM_LIMIT = 8
LLM_TIMEOUT_S = 90.0
_GENERIC = re.compile(r"^(?:full rewrite|\d+ SEARCH/REPLACE edit\(s\)|variant \d+|seed|)$", re.I)


@dataclass
class DistillSummary:
    """What one distillation did (the ``advice`` section of ``report.json``)."""

    eligible: int = 0  # mutations with gain above the threshold
    proposed: list[str] = field(default_factory=list)  # ids of new advice
    merged: list[str] = field(default_factory=list)  # advice that took a mutation in (per mutation)
    already: int = 0  # children distilled before (same run and child id)
    failed: int = 0  # no usable sentence
    by_method: dict[str, int] = field(default_factory=dict)  # template | llm | fallback
    llm_calls: int = 0
    items: list[dict[str, Any]] = field(default_factory=list)  # one per eligible mutation

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _clip(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1].rstrip() + "…"


def diff_summary(diff: str | None) -> str | None:
    """``"changed `e = tl.exp(x)` to `e = tl.exp2(x * 1.44)`"`` from a unified diff."""
    removed = added = None
    for line in (diff or "").splitlines():
        if line.startswith(("---", "+++", "@@")):
            continue
        body = line[1:].strip()
        if not body or body.startswith("#"):
            continue
        if line.startswith("-") and removed is None:
            removed = body
        elif line.startswith("+") and added is None:
            added = body
        if removed and added:
            break
    if removed and added:
        return f"changed `{_clip(removed, 60)}` to `{_clip(added, 60)}`"
    if added:
        return f"added `{_clip(added, 80)}`"
    if removed:
        return f"removed `{_clip(removed, 80)}`"
    return None


def fallback_text(m: Mutation) -> str | None:
    """A sentence for a mutation without the model: its own description (the model's first
    line of prose) or a diff summary, the gain and the task."""
    what = m.description.strip().rstrip(".")
    if _GENERIC.match(what) or len(what) < 8:
        what = diff_summary(m.diff) or ""
    if not what:
        return None
    what = _clip(what[0].upper() + what[1:], 160)
    if m.interpreter:
        return (f"{what}: {pct(m.gain)} interpreter wall time on {task_label(m.task)} "
                "(Triton CPU interpreter, not a GPU timing).")
    where = gpu_label(m.gpu)
    return f"{what}: {pct(m.gain)} on {task_label(m.task)}" + (f", {where}." if where else ".")


def _fallback(m: Mutation) -> Advice | None:
    text = fallback_text(m)
    if text is None:
        return None
    advice = make_advice(m, text, suggest_tags(text))
    return advice.with_(extra={**advice.extra, "distilled_without_model": True})


def distilled_children(store: AdviceStore) -> set[tuple[str, str]]:
    """(run, child id) of every mutation the library already learned from."""
    return {(p["run"], p["child"]) for d in store.snapshot().docs
            for p in d.get("provenance") or () if p.get("run") and p.get("child")}


async def distill_mutations(
    store: AdviceStore,
    mutations: Iterable[Mutation],
    ask: Ask | None = None,
    *,
    min_gain: float = MIN_GAIN,
    llm_limit: int = LLM_LIMIT,
    llm_timeout: float = LLM_TIMEOUT_S,
    summary: DistillSummary | None = None,
) -> DistillSummary:
    """Proposed advice from every mutation with gain > ``min_gain`` (largest gains first).
    ``summary`` is filled as it goes, so a cancelled call still tells what it stored."""
    out = summary if summary is not None else DistillSummary()
    todo = sorted((m for m in mutations if m.gain > min_gain), key=lambda m: -m.gain)
    out.eligible += len(todo)
    if not todo:
        return out
    seen = await asyncio.to_thread(distilled_children, store)
    for m in todo:
        if m.run and m.child and (m.run, m.child) in seen:
            out.already += 1
            continue
        advice, method = None, "template"
        if m.changes:
            advice = distill_params(m)
        else:
            if ask is not None and out.llm_calls < llm_limit:
                method = "llm"
                out.llm_calls += 1
                try:
                    advice = await asyncio.wait_for(distill_llm(ask, m), llm_timeout)
                except Exception:  # a model failure must not cost the rest
                    advice = None
            if advice is None:
                method = "fallback"
                advice = _fallback(m)
        item = {"parent": m.parent, "child": m.child, "gain": round(m.gain, 4), "method": method}
        if advice is None:
            out.failed += 1
            out.items.append({**item, "advice": None})
            continue
        stored, merged = await asyncio.to_thread(merge_or_add, store, advice)
        (out.merged if merged else out.proposed).append(stored.id)
        out.by_method[method] = out.by_method.get(method, 0) + 1
        out.items.append({**item, "advice": stored.id, "merged": merged, "text": stored.text})
        if m.run and m.child:
            seen.add((m.run, m.child))
    return out


__all__ = ["DistillSummary", "diff_summary", "distill_mutations", "distilled_children",
           "fallback_text"]
