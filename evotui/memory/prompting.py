"""Retrieved advice as a block of the mutation prompt: optional references, never orders.

The wording (``prompts/advice_block.txt``) keeps the model exploring: the seed's finding is
that advice presented as instructions makes the search collapse onto what it already knows.
Each item carries what makes it trustworthy or not: the measured gain and where it was
measured, how often it helped when shown, and its tags.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from importlib import resources

from evotui.memory.model import Advice


@cache
def _template(name: str) -> str:
    return resources.files("evotui.memory").joinpath("prompts", name).read_text(encoding="utf-8")


def load_prompt(name: str) -> str:
    """A prompt template shipped in ``evotui/memory/prompts/``."""
    return _template(name)


def pct(gain: float) -> str:
    """0.12 → "+12 %", 0.055 → "+5.5 %"."""
    v = gain * 100
    return f"{v:+.0f} %" if abs(v) >= 10 else f"{v:+.1f} %"


def evidence(a: Advice) -> str:
    """How much to trust this piece of advice, in a few words."""
    parts: list[str] = []
    if a.gain is not None:
        where = ", ".join(x for x in (_where(a),) if x)
        parts.append(f"measured {pct(a.gain)}" + (f" on {where}" if where else ""))
    elif a.source == "cold-start":
        parts.append("general tip, not measured here")
    elif a.status == "authored" or a.source == "authored":
        parts.append("written by the user")
    if a.status == "accepted":
        parts.append("accepted by the user")
    if a.shown:
        parts.append(f"helped {a.improved} of {a.shown} times shown")
    if a.tags:
        parts.append("tags: " + ", ".join(a.tags))
    return "; ".join(parts)


def _where(a: Advice) -> str:
    for p in a.provenance:
        bits = [b for b in (p.task, p.gpu) if b]
        if bits:
            return " ".join(bits)
    return ""


def format_item(a: Advice) -> str:
    ev = evidence(a)
    return f"- [{a.id}] {a.text}" + (f" ({ev})" if ev else "")


def format_advice(advice: Sequence[Advice]) -> str:
    """The prompt block for ``advice``; the empty string when there is none (memory off)."""
    if not advice:
        return ""
    items = "\n".join(format_item(a) for a in advice)
    return _template("advice_block.txt").format(items=items).strip() + "\n"
