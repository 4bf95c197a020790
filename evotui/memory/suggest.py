"""Tunable suggestions carried by a piece of advice, for the model-free parameter mutator.

Advice reaches the parameter mutator through structured changes, in this order:

1. ``conditions["template"]["changes"]`` — what distillation stores for a change of
   tunables (``{"BLOCK_SIZE": [1024, 4096], "NUM_WARPS": [4, 8]}``: name → [old, new]);
2. ``conditions["tunables"]`` — for advice written by hand: ``{"num_warps": 8}`` (a value)
   or ``{"num_warps": [4, 8]}`` (a move);
3. the text itself when it spells a move: ``"num_warps 4→8"``, ``"BLOCK_SIZE 1024 -> 4096"``,
   ``"NUM_STAGES from 2 to 3"``.

Names match a candidate's tunables exactly or by their last part, case-insensitively
(``NUM_WARPS``, ``num_warps`` and ``launch:softmax_kernel:num_warps`` are all ``num_warps``),
so advice learned on one kernel can steer another.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_MOVE = re.compile(r"(\d+)\s*(?:→|->)\s*(\d+)|from\s+(\d+)\s+to\s+(\d+)")
_NAME = re.compile(r"([A-Za-z_][\w]*(?::[\w#]+)*)\s*=?\s*$")  # right before a move
_ALIASES = {"warps": "num_warps", "stages": "num_stages", "block": "block_size"}


def base_name(name: str) -> str:
    """``"launch:k#2:num_warps"`` → ``"num_warps"``; ``"BLOCK_SIZE"`` → ``"block_size"``."""
    low = name.rsplit(":", 1)[-1].strip().lower()
    return _ALIASES.get(low, low)


@dataclass(frozen=True)
class TunableHint:
    """One suggested move of one tunable: to ``new`` (from ``old`` when known)."""

    name: str
    new: int
    old: int | None = None

    @property
    def base(self) -> str:
        return base_name(self.name)

    @property
    def direction(self) -> int:
        """+1 up, -1 down, 0 unknown (a bare value)."""
        if self.old is None or self.old == self.new:
            return 0
        return 1 if self.new > self.old else -1


def _int(v: Any) -> int | None:
    try:
        n = int(v)
    except (TypeError, ValueError):
        return None
    return n if n >= 0 else None


def _from_mapping(changes: Mapping[str, Any]) -> list[TunableHint]:
    out: list[TunableHint] = []
    for name, v in changes.items():
        if isinstance(v, list | tuple) and len(v) == 2:
            old, new = _int(v[0]), _int(v[1])
        else:
            old, new = None, _int(v)
        if new is not None and str(name).strip():
            out.append(TunableHint(str(name), new, old))
    return out


def _from_text(text: str) -> list[TunableHint]:
    out: list[TunableHint] = []
    for m in _MOVE.finditer(text):
        old, new = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        named = _NAME.search(text, max(0, m.start() - 80), m.start())
        if named is None:
            continue
        name = named.group(1)
        if ("_" in name or ":" in name or name.isupper()) and int(old) != int(new):
            out.append(TunableHint(name, int(new), int(old)))
    return out


def tunable_hints(item: Any) -> tuple[TunableHint, ...]:
    """The tunable moves a piece of advice suggests (an ``Advice``, its document or a view
    dict); empty when it suggests none."""
    get = item.get if isinstance(item, Mapping) else (lambda k, d=None: getattr(item, k, d))
    cond = get("conditions", None) or {}
    template = cond.get("template") if isinstance(cond, Mapping) else None
    if isinstance(template, Mapping) and isinstance(template.get("changes"), Mapping):
        found = _from_mapping(template["changes"])
        if found:
            return tuple(found)
    if isinstance(cond, Mapping) and isinstance(cond.get("tunables"), Mapping):
        found = _from_mapping(cond["tunables"])
        if found:
            return tuple(found)
    return tuple(_from_text(str(get("text", "") or "")))


def has_hints(doc: Mapping[str, Any]) -> bool:
    """Whether ``tunable_hints(doc)`` is not empty (fast: the retrieval index asks this of
    every document)."""
    cond = doc.get("conditions") or {}
    template = cond.get("template") if isinstance(cond, Mapping) else None
    if isinstance(template, Mapping) and template.get("changes") or \
            isinstance(cond, Mapping) and cond.get("tunables"):
        return True
    text = str(doc.get("text") or "")
    if "→" not in text and "->" not in text and " from " not in text:
        return False
    return bool(_from_text(text))


__all__ = ["TunableHint", "base_name", "has_hints", "tunable_hints"]
