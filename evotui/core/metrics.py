"""A candidate's measured figures, as one record.

The evaluator's ``EvalResult.metrics`` makes it once; the population's ``Candidate``, the
``CandidateEvaluated`` and ``GenerationDone`` events, the report and the TUI hold that same
record instead of copying its figures one by one.

On disk (``events.jsonl``, checkpoints, ``report.json``) a record is written flat, its
fields beside the other keys of the object that holds it (``to_dict``, optionally under a
prefix such as ``best_``), and read back from there (``from_dict``), so the JSON keeps the
field names it always had.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True)
class Metrics:
    # median ms per call; on Triton's CPU interpreter its wall time, which is no kernel speed
    time_ms: float | None = None
    spread_pct: float | None = None  # the timing's measured spread, in %
    timing_method: str | None = None  # how it was timed ("coarse": a clear loser, few samples)
    speedup_eager: float | None = None  # vs eager PyTorch; never set on the interpreter
    speedup_compile: float | None = None  # vs torch.compile; never set on the interpreter
    roofline_pct: float | None = None  # % of the roofline
    # memory-bound tasks: a plain device copy of the same bytes vs the candidate, in %
    copy_pct: float | None = None
    max_abs_err: float | None = None  # the largest difference from the reference
    launches: tuple[tuple[str, int], ...] = ()  # (kernel, launches per call)
    interpreter: bool = False  # measured on Triton's CPU interpreter
    wall_s: float = 0.0  # how long the evaluation took, in seconds

    def to_dict(self, prefix: str = "") -> dict[str, Any]:
        """Flat JSON-ready figures, each key under ``prefix``."""
        d = {prefix + f.name: getattr(self, f.name) for f in _FIELDS}
        d[prefix + "launches"] = dict(self.launches)
        return d

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], prefix: str = "") -> Metrics:
        """The figures found in ``data`` under ``prefix``; other keys are ignored and missing
        ones take their defaults (a line or checkpoint written before a field existed)."""
        kwargs = {f.name: data[prefix + f.name] for f in _FIELDS
                  if data.get(prefix + f.name) is not None}
        kwargs["launches"] = launch_pairs(kwargs.get("launches") or ())
        kwargs["interpreter"] = bool(kwargs.get("interpreter", False))
        kwargs["wall_s"] = float(kwargs.get("wall_s", 0.0))
        return cls(**kwargs)


def launch_pairs(launches: Mapping[str, int] | Iterable[Any]) -> tuple[tuple[str, int], ...]:
    """``{kernel: count}`` (or its pairs) as the record's tuple of pairs."""
    items = launches.items() if isinstance(launches, Mapping) else launches
    return tuple((str(name), int(count)) for name, count in items)


_FIELDS = fields(Metrics)
NAMES = frozenset(f.name for f in _FIELDS)

__all__ = ["Metrics", "NAMES", "launch_pairs"]


def ratio_parts(eager: float | None, compile_: float | None, roofline: float | None,
                labels: tuple[str, str, str] = ("eager", "torch.compile", "% of roofline"),
                ) -> list[str]:
    """The measured ratios as words (each face words them for its reader): speedups against
    eager PyTorch and torch.compile, then the share of the roofline; the missing ones left out."""
    parts = []
    if eager is not None:
        parts.append(f"{eager:.2f}× {labels[0]}")
    if compile_ is not None:
        parts.append(f"{compile_:.2f}× {labels[1]}")
    if roofline is not None:
        parts.append(f"{roofline:.0f} {labels[2]}")
    return parts
