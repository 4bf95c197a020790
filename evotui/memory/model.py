"""The advice record: one sentence of advice with its context, measured effect and history.

``Advice`` is what crosses every boundary of ``evotui.memory`` (store, retrieval, hook,
prompt, CLI). On disk it is a plain JSON object (``to_doc``/``from_doc``); unknown keys in a
document are kept in ``extra`` so that a newer evotui's fields survive an older one's edit.

Counters are kept per library (``counters = {library_id: [shown, improved]}``): totals are
sums, and merging two copies of the same advice takes the maximum per library. That makes
import idempotent (importing twice adds nothing) while team members' counts still add up.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field, fields, replace
from datetime import UTC, datetime
from typing import Any

STATUSES = ("proposed", "accepted", "vetoed", "authored")
SOURCES = ("distilled", "authored", "cold-start", "imported")
GENERAL_KIND = "general"

# Beta prior on the win rate (the child improved when this advice was shown): mean 0.2,
# worth five showings. Typical LLM mutations improve the parent well under half the time.
PRIOR_WINS = 1.0
PRIOR_LOSSES = 4.0


def now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def new_id() -> str:
    return secrets.token_hex(4)


def is_valid_id(advice_id: str) -> bool:
    return len(advice_id) == 8 and all(c in "0123456789abcdef" for c in advice_id)


@dataclass(frozen=True)
class Provenance:
    """Where and how one piece of advice was verified (or written)."""

    source: str = "distilled"  # distilled | authored | cold-start | imported
    run: str | None = None
    parent: str | None = None  # candidate ids, parent → child
    child: str | None = None
    task: str | None = None
    model: str | None = None
    backend: str | None = None
    gpu: str | None = None
    gain: float | None = None  # the gain measured in this run (fraction: 0.12 = +12 %)
    date: str = field(default_factory=now_iso)
    # the task and machine it was measured on (all optional; older records lack them)
    kind: str | None = None
    shape: str | None = None  # "8192x8192"
    dtype: str | None = None  # "fp32"
    arch: str | None = None  # "sm_90"; "cpu" for Triton's CPU interpreter
    interpreter: bool | None = None  # True: interpreter wall time, not a kernel timing

    def key(self) -> tuple:
        """Identity for de-duplication: the same verification imported twice is one."""
        return (self.source, self.run, self.parent, self.child, self.task, self.gpu, self.date)

    def to_doc(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}

    @classmethod
    def from_doc(cls, doc: dict[str, Any]) -> Provenance:
        known = {f.name for f in fields(cls)}
        kw = {k: v for k, v in doc.items() if k in known}
        if kw.get("gain") is not None:
            kw["gain"] = float(kw["gain"])
        return cls(**kw)


@dataclass(frozen=True)
class Advice:
    id: str
    text: str
    kind: str = GENERAL_KIND
    tags: tuple[str, ...] = ()
    # Validity conditions, all optional: {"dtypes": ["bf16"], "shapes": ["8192x8192"],
    # "archs": ["sm_90"], "min_size": 4096, "template": {...}} — see retrieve/distill.
    # Structured tunable moves for the parameter mutator live here too: distillation's
    # ``template["changes"]`` ({name: [old, new]}) or a hand-written ``tunables`` mapping
    # (see ``evotui.memory.suggest``).
    conditions: dict[str, Any] = field(default_factory=dict)
    arch: str | None = None  # normalised ("sm_90"); None = any GPU
    gain: float | None = None  # representative measured gain (fraction), None = unmeasured
    provenance: tuple[Provenance, ...] = ()
    status: str = "proposed"
    counters: dict[str, list[int]] = field(default_factory=dict)  # library → [shown, improved]
    created: str = field(default_factory=now_iso)
    updated: str = field(default_factory=now_iso)
    decided: str = field(default_factory=now_iso)  # when the status was last set
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown status {self.status!r}; expected one of {STATUSES}")

    # -- derived -----------------------------------------------------------------------------
    @property
    def shown(self) -> int:
        return sum(int(c[0]) for c in self.counters.values())

    @property
    def improved(self) -> int:
        return sum(int(c[1]) for c in self.counters.values())

    @property
    def win_rate(self) -> float | None:
        """Raw fraction of showings after which the child improved; None when never shown."""
        return self.improved / self.shown if self.shown else None

    @property
    def win_rate_smoothed(self) -> float:
        return (self.improved + PRIOR_WINS) / (self.shown + PRIOR_WINS + PRIOR_LOSSES)

    @property
    def source(self) -> str:
        return self.provenance[0].source if self.provenance else "authored"

    def with_(self, **changes: Any) -> Advice:
        return replace(self, **changes)

    # -- (de)serialisation -------------------------------------------------------------------
    def to_doc(self) -> dict[str, Any]:
        doc: dict[str, Any] = dict(self.extra)
        doc.update(
            id=self.id,
            text=self.text,
            kind=self.kind,
            tags=list(self.tags),
            conditions=dict(self.conditions),
            arch=self.arch,
            gain=self.gain,
            provenance=[p.to_doc() for p in self.provenance],
            status=self.status,
            counters={k: [int(v[0]), int(v[1])] for k, v in self.counters.items()},
            created=self.created,
            updated=self.updated,
            decided=self.decided,
        )
        return doc

    @classmethod
    def from_doc(cls, doc: dict[str, Any]) -> Advice:
        """Raises ``BadAdvice`` (a ``ValueError`` naming the field) for a malformed document:
        the library is a JSON file people edit by hand."""
        if not isinstance(doc, dict):
            raise BadAdvice(f"the record is {_short(doc)}, not an object")
        known = {f.name for f in fields(cls)} - {"extra"}
        extra = {k: v for k, v in doc.items() if k not in known}
        created = _opt_str(doc, "created") or now_iso()
        return cls(
            id=_required_str(doc, "id"),
            text=_required_str(doc, "text"),
            kind=_opt_str(doc, "kind") or GENERAL_KIND,
            tags=tuple(_str_list(doc, "tags")),
            conditions=dict(_opt_dict(doc, "conditions")),
            arch=_opt_str(doc, "arch") or None,
            gain=_opt_number(doc, "gain"),
            provenance=tuple(_provenance(doc.get("provenance"))),
            status=_status(doc),
            counters=_counters(doc.get("counters")),
            created=created,
            updated=_opt_str(doc, "updated") or created,
            decided=_opt_str(doc, "decided") or created,
            extra=extra,
        )


class BadAdvice(ValueError):
    """A document that is not a valid advice record; the message names the field."""


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


def _expected(name: str, value: Any, what: str) -> BadAdvice:
    return BadAdvice(f"{name} is {_short(value)}, expected {what}")


def _required_str(doc: dict[str, Any], name: str) -> str:
    value = doc.get(name)
    if value is None:
        raise BadAdvice(f"{name} is missing")
    if not isinstance(value, str) or not value.strip():
        raise _expected(name, value, "a non-empty string")
    return value


def _opt_str(doc: dict[str, Any], name: str) -> str | None:
    value = doc.get(name)
    if value is not None and not isinstance(value, str):
        raise _expected(name, value, "a string")
    return value


def _str_list(doc: dict[str, Any], name: str) -> list[str]:
    value = doc.get(name)
    if value is None:
        return []
    if not isinstance(value, list | tuple) or not all(isinstance(x, str) for x in value):
        raise _expected(name, value, "a list of strings")
    return list(value)


def _opt_dict(doc: dict[str, Any], name: str) -> dict[str, Any]:
    value = doc.get(name)
    if value is not None and not isinstance(value, dict):
        raise _expected(name, value, "an object")
    return value or {}


def _opt_number(doc: dict[str, Any], name: str) -> float | None:
    value = doc.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise _expected(name, value, "a number")
    return float(value)


def _status(doc: dict[str, Any]) -> str:
    value = doc.get("status") or "proposed"
    if value not in STATUSES:
        raise _expected("status", value, f"one of {', '.join(STATUSES)}")
    return str(value)


def _provenance(value: Any) -> list[Provenance]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(p, dict) for p in value):
        raise _expected("provenance", value, "a list of objects")
    for p in value:
        _opt_number(p, "gain")
    return [Provenance.from_doc(p) for p in value]


def _counters(value: Any) -> dict[str, list[int]]:
    """``{library: [shown, improved]}``, both whole numbers."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _expected("counters", value, "an object {library: [shown, improved]}")
    out: dict[str, list[int]] = {}
    for lib, pair in value.items():
        if (not isinstance(pair, list) or len(pair) != 2
                or not all(isinstance(n, int) and not isinstance(n, bool) for n in pair)):
            raise _expected(f"counters[{lib!r}]", pair, "[shown, improved]")
        out[str(lib)] = [pair[0], pair[1]]
    return out
