"""What a run knows, apart from the machinery running it: configuration, population, RNG,
counters, the incumbent best, human hints — and how it goes to and from a checkpoint.

Synchronous and free of I/O; ``evotui.engine.loop.Engine`` drives it.
"""

from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from evotui.core import reasons
from evotui.core.metrics import Metrics
from evotui.engine.population import Candidate, Population
from evotui.eval.results import EvalResult


@dataclass
class EngineConfig:
    iterations: int = 20  # evaluated children
    seed: int = 0  # of the run's random.Random
    n_islands: int = 4
    island_capacity: int = 32
    elite_size: int = 8
    exploration: float = 0.2
    tournament_size: int = 3
    migration_interval: int = 5  # generations
    inspirations: int = 2
    memory_k: int = 3
    generation_size: int = 0  # evaluated children per generation; 0: max(4, lanes)
    concurrency: int = 0  # iterations in flight; 0: lanes + 1 (param) or lanes + 2 (model)
    eval_timeout_s: float = 180.0
    eval_trials: int = 5
    # a child whose first timing estimate is this many times slower than the best is timed
    # with a few samples only (it cannot win; bad GEMM tilings run ~100 ms a call); 0: off
    slow_cutoff_factor: float = 2.0
    max_consecutive_failures: int = 12  # mutations without a child, in a row
    seed_attempts: int = 6  # answers a model gets to write an accepted generation 0 (no seed)
    max_harness_errors: int = 3  # evaluator failures (not the candidate's fault), in a row
    min_gain: float = 0.01
    spread_factor: float = 3.0
    distill: bool = True  # at the end: children > distill_min_gain faster → proposed advice
    distill_min_gain: float = 0.05

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EngineConfig:
        """Raises ``ValueError``/``TypeError`` for a setting of the wrong type."""
        known = {f.name: f.default for f in fields(cls)}
        return cls(**{k: _setting(k, known[k], v) for k, v in data.items() if k in known})


def _setting(name: str, default: Any, value: Any) -> Any:
    """A stored setting as the default's type (a hand-edited checkpoint may hold anything)."""
    wrong = f"config {name!r} is {value!r}, expected {type(default).__name__}"
    if isinstance(default, bool) or isinstance(value, bool):
        if type(value) is not type(default):
            raise TypeError(wrong)
        return value
    try:
        return type(default)(value)
    except (TypeError, ValueError):
        raise ValueError(wrong) from None


@dataclass(frozen=True)
class Verdict:
    improved: bool  # beat its parent by more than the noise margin
    new_best: bool  # the first accepted candidate, or beat the incumbent by that margin


@dataclass
class RunState:
    config: EngineConfig
    population: Population
    rng: random.Random
    generation: int = 0
    evaluated: int = 0  # children with a verdict (the seed does not count)
    seed_id: str | None = None
    best_id: str | None = None
    hints: list[list[Any]] = field(default_factory=list)  # [text, uses left or None]
    tried: set[str] = field(default_factory=set)  # config keys evaluated or in flight
    eval_seconds: float = 0.0
    elapsed_before: float = 0.0  # wall seconds of earlier sessions of this run
    outcome: str | None = None
    outcome_message: str = ""

    @classmethod
    def new(cls, config: EngineConfig) -> RunState:
        population = Population(n_islands=config.n_islands,
                                island_capacity=config.island_capacity,
                                elite_size=config.elite_size, exploration=config.exploration,
                                tournament_size=config.tournament_size)
        return cls(config, population, random.Random(config.seed))

    @property
    def best(self) -> Candidate | None:
        return self.population.get(self.best_id) if self.best_id else None

    def children(self) -> list[Candidate]:
        """Evaluated children: no seed, no copies made by seeding or migration."""
        return [c for c in self.population.candidates()
                if c.copy_of is None and c.mutator != "seed" and c.status != "pending"]

    def beats(self, new: Metrics, old: Metrics) -> bool:
        """Faster than ``old`` by more than max(min_gain, spread_factor × larger spread).
        A coarse timing (a few samples of a clear loser) never beats anything."""
        if new.time_ms is None or old.time_ms is None or new.timing_method == "coarse":
            return False
        spread = max(new.spread_pct or 0.0, old.spread_pct or 0.0)
        margin = max(self.config.min_gain, self.config.spread_factor * spread / 100)
        return new.time_ms < old.time_ms * (1 - margin)

    def record(self, c: Candidate, parent: Candidate | None, r: EvalResult) -> Verdict:
        """Store a verdict on ``c`` (the seed when ``parent`` is None)."""
        c.status = "accepted" if r.accepted else "rejected"
        c.reason, c.message = r.reason, r.message
        c.metrics = r.metrics
        self.population.add(c)
        self.tried.add(c.config_key)
        self.eval_seconds += r.wall_s
        improved = False
        if parent is not None:
            self.evaluated += 1
            if r.accepted:
                parent.extra.pop("last_failure", None)
                improved = self.beats(c.metrics, parent.metrics)
            elif r.reason != reasons.HARNESS_ERROR:  # the next prompt learns from it
                parent.extra["last_failure"] = {"id": c.id, "reason": r.reason, "message": r.message}
            c.extra["improved"] = improved
        best = self.best
        new_best = r.accepted and (best is None or self.beats(c.metrics, best.metrics))
        if new_best:
            self.best_id = c.id
        return Verdict(improved, new_best)

    def add_hint(self, text: str, uses: int | None) -> None:
        if text.strip():
            self.hints.append([text.strip(), uses])
        else:
            self.hints.clear()

    def take_hints(self) -> list[str]:
        """The hints for one prompt; each one-use-limited hint loses a use."""
        texts = [h[0] for h in self.hints]
        for h in self.hints:
            if h[1] is not None:
                h[1] -= 1
        self.hints = [h for h in self.hints if h[1] is None or h[1] > 0]
        return texts

    def finish(self, outcome: str, message: str) -> bool:
        """Record why the run ends; the first reason wins. True when this one was recorded."""
        if self.outcome is not None:
            return False
        self.outcome, self.outcome_message = outcome, message
        return True

    # ---- checkpoints -----------------------------------------------------------------------
    def to_dict(self, elapsed: float) -> dict[str, Any]:
        """A consistent snapshot: candidates in flight are not in the population yet."""
        version, internal, gauss = self.rng.getstate()
        return {
            "config": self.config.to_dict(),
            "population": self.population.to_dict(),
            "rng": [version, list(internal), gauss],
            "generation": self.generation,
            "evaluated": self.evaluated,
            "seed_id": self.seed_id,
            "best_id": self.best_id,
            "hints": [list(h) for h in self.hints],
            "eval_seconds": self.eval_seconds,
            "elapsed_s": elapsed,
            "outcome": self.outcome,
            "outcome_message": self.outcome_message,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], config: EngineConfig) -> RunState:
        """Continue a checkpointed run (``config`` may differ, e.g. more iterations)."""
        version, internal, gauss = data["rng"]
        rng = random.Random()
        rng.setstate((version, tuple(internal), gauss))
        population = Population.from_dict(data["population"])
        return cls(
            config, population, rng,
            generation=int(data.get("generation", 0)),
            evaluated=int(data.get("evaluated", 0)),
            seed_id=data.get("seed_id"),
            best_id=data.get("best_id"),
            hints=[list(h) for h in data.get("hints", [])],
            tried={c.config_key for c in population.candidates()},
            eval_seconds=float(data.get("eval_seconds", 0.0)),
            elapsed_before=float(data.get("elapsed_s", 0.0)),
        )
