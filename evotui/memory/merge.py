"""Merging two copies of the same advice (import, de-duplication, distillation).

The merge is commutative and idempotent, so importing a file twice, or two team members
importing each other's exports, converges instead of double counting:

- counters: per library, the larger count (a grow-only counter per library) when both are
  copies of one record; the sum when two distinct records are folded together;
- provenance: union (the same verification is kept once), gain = median of measured gains;
- tags: union; created: the earlier; updated: the later;
- status: the later human decision wins; on a tie the stronger one
  (vetoed > accepted > authored > proposed);
- text, kind, arch, conditions: the more recently updated copy's when both are the same
  record (same id); otherwise the local copy's.
"""

from __future__ import annotations

import statistics

from evotui.memory.model import Advice, Provenance

_STRENGTH = {"proposed": 0, "authored": 1, "accepted": 2, "vetoed": 3}


def merge_counters(a: dict[str, list[int]], b: dict[str, list[int]]) -> dict[str, list[int]]:
    out = {k: list(v) for k, v in a.items()}
    for lib, (shown, improved) in b.items():
        mine = out.get(lib, [0, 0])
        out[lib] = [max(mine[0], int(shown)), max(mine[1], int(improved))]
    return out


def merge_provenance(a: tuple[Provenance, ...], b: tuple[Provenance, ...]) -> tuple[Provenance, ...]:
    seen = {p.key() for p in a}
    out = list(a)
    for p in b:
        if p.key() not in seen:
            seen.add(p.key())
            out.append(p)
    return tuple(out)


def gain_of(provenance: tuple[Provenance, ...], fallback: float | None) -> float | None:
    gains = [p.gain for p in provenance if p.gain is not None]
    return float(statistics.median(gains)) if gains else fallback


def sum_counters(a: dict[str, list[int]], b: dict[str, list[int]]) -> dict[str, list[int]]:
    out = {k: list(v) for k, v in a.items()}
    for lib, (shown, improved) in b.items():
        mine = out.get(lib, [0, 0])
        out[lib] = [mine[0] + int(shown), mine[1] + int(improved)]
    return out


def merge(local: Advice, incoming: Advice, counters: str = "max") -> Advice:
    """``local`` with ``incoming`` folded in; keeps ``local.id``.

    ``counters="max"`` for two copies of one record (import); ``"sum"`` for two distinct
    records of the same library folded into one (``advice merge``, near-duplicates).
    """
    same_record = local.id == incoming.id
    newer = incoming if same_record and incoming.updated > local.updated else local
    if (incoming.decided, _STRENGTH[incoming.status]) > (local.decided, _STRENGTH[local.status]):
        status, decided = incoming.status, incoming.decided
    else:
        status, decided = local.status, local.decided
    provenance = merge_provenance(local.provenance, incoming.provenance)
    fallback = local.gain if local.gain is not None else incoming.gain
    tags = tuple(dict.fromkeys(newer.tags + local.tags + incoming.tags))
    merged = local.with_(
        text=newer.text,
        kind=newer.kind,
        arch=newer.arch,
        conditions=dict(newer.conditions),
        tags=tags,
        provenance=provenance,
        gain=gain_of(provenance, fallback),
        counters=(sum_counters if counters == "sum" else merge_counters)(
            local.counters, incoming.counters
        ),
        status=status,
        decided=decided,
        created=min(local.created, incoming.created),
        updated=max(local.updated, incoming.updated),
        extra={**incoming.extra, **newer.extra},
    )
    return merged if merged.to_doc() != local.to_doc() else local
