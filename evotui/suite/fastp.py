"""KernelBench's suite metrics, as its ``src/score.py`` defines them.

- ``fast_p``: the number of problems that are correct AND have speedup strictly greater than
  ``p``, divided by the number of ALL problems (those that could not start or found no
  correct kernel count in the denominator). ``fast_0`` is therefore the correctness rate.
- the geometric mean speedup over the correct problems only.

A correct problem whose speedup was not measured (the CPU interpreter times nothing; a
torch.compile baseline that failed) counts as not faster than any ``p``; callers say how many
there were.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

THRESHOLDS = (0.0, 0.5, 0.8, 1.0, 1.5, 2.0)


@dataclass(frozen=True)
class Outcome:
    """One problem: did it end with a correct kernel, and how fast against a baseline."""

    correct: bool
    speedup: float | None = None  # baseline time / kernel time; None when not measured


def fast_p(outcomes: Sequence[Outcome], p: float) -> float:
    """Fraction of all problems that are correct with speedup > ``p`` (0 for no problems)."""
    if not outcomes:
        return 0.0
    fast = sum(1 for o in outcomes if o.correct and o.speedup is not None and o.speedup > p)
    return fast / len(outcomes)


def fast_p_table(outcomes: Sequence[Outcome],
                 thresholds: Iterable[float] = THRESHOLDS) -> dict[str, float]:
    """``{"fast_0": …, "fast_0.5": …, …}``."""
    return {f"fast_{p:g}": fast_p(outcomes, p) for p in thresholds}


def geometric_mean(values: Iterable[float]) -> float | None:
    """Geometric mean of positive numbers; None for none."""
    logs = [math.log(v) for v in values]
    if not logs:
        return None
    return math.exp(sum(logs) / len(logs))


def geomean_speedup(outcomes: Sequence[Outcome]) -> float | None:
    """Geometric mean speedup over the correct problems that have a measured speedup."""
    return geometric_mean(o.speedup for o in outcomes
                          if o.correct and o.speedup is not None and o.speedup > 0)


def unmeasured(outcomes: Sequence[Outcome]) -> int:
    """Correct problems without a speedup figure (counted as not faster)."""
    return sum(1 for o in outcomes if o.correct and o.speedup is None)
