"""The population: candidates, islands, a global elite archive, parent selection, migration.

Every candidate ever added is kept (``candidates()``), whatever its status. Only accepted
candidates are *members* of an island and can be parents. Each member belongs to exactly one
island (``Candidate.island``), so a child simply inherits ``parent.island``. Two events put a
*copy* of an accepted candidate into another island, with a new id, ``parent_id`` and
``copy_of`` set to the original and the same source and metrics:

- adding an accepted seed (``mutator == "seed"``) copies it into every other island, so all
  islands start from the seed and evolve independently (as OpenEvolve does);
- migration copies each island's best into the next island of the ring.

Copies are not evaluations: ``counts()``, which every count of verdicts (the report's,
``GenerationDone``'s) comes from, leaves them out.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field, fields
from typing import Any

from evotui.core.metrics import NAMES as METRIC_NAMES
from evotui.core.metrics import Metrics
from evotui.engine.tunables import config_key

STATUSES = ("pending", "accepted", "rejected")


@dataclass
class Candidate:
    id: str
    source: str
    parent_id: str | None = None
    island: int = 0
    generation: int = 0
    mutator: str = "llm"  # "seed" | "param" | "llm"
    model: str | None = None
    status: str = "pending"  # "pending" | "accepted" | "rejected"
    reason: str | None = None  # stable code, e.g. "mismatch", "timeout"
    message: str | None = None
    metrics: Metrics = field(default_factory=Metrics)  # the verdict's figures (none pending)
    score: float | None = None  # when set, ranks instead of time (e.g. CPU interpreter runs)
    advice_ids: list[str] = field(default_factory=list)
    description: str = ""
    created: float = field(default_factory=time.time)
    copy_of: str | None = None  # set on seed copies and migrants
    extra: dict[str, Any] = field(default_factory=dict)  # JSON-serialisable engine data
    # ``tunables.config_key(source)``: computed once, when the program is first made (a
    # mutator that already has it passes it on), and carried from then on
    config_key: str = ""

    def __post_init__(self) -> None:
        if not self.config_key:
            self.config_key = config_key(self.source)

    @property
    def fitness(self) -> float | None:
        """Higher is better; None unless accepted. ``score`` wins, then 1/time_ms, else 0."""
        if self.status != "accepted":
            return None
        if self.score is not None:
            return self.score
        time_ms = self.metrics.time_ms
        if time_ms is not None and time_ms > 0:
            return 1.0 / time_ms
        return 0.0

    def to_dict(self) -> dict[str, Any]:
        """Flat: the figures sit beside the other keys (``Metrics.to_dict``)."""
        # shallow (asdict deep-copies: 5x slower on a checkpoint of thousands); the two
        # containers are copied so a snapshot does not change under a writer thread
        d = {f.name: getattr(self, f.name) for f in _FIELDS if f.name != "metrics"}
        d["advice_ids"], d["extra"] = list(self.advice_ids), dict(self.extra)
        d.update(self.metrics.to_dict())
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Candidate:
        """Unknown keys are ignored and missing ones take their defaults (old checkpoints,
        which kept some figures in ``extra``: they are read from there)."""
        known = {f.name for f in _FIELDS} - {"metrics"}
        kwargs = {k: v for k, v in data.items() if k in known}
        kwargs["advice_ids"] = list(kwargs.get("advice_ids") or [])
        extra = dict(kwargs.get("extra") or {})
        kwargs["metrics"] = Metrics.from_dict({**extra, **data})
        kwargs["extra"] = {k: v for k, v in extra.items() if k not in METRIC_NAMES}
        return cls(**kwargs)


_FIELDS = fields(Candidate)


class Population:
    def __init__(
        self,
        n_islands: int = 4,
        island_capacity: int = 32,
        elite_size: int = 8,
        exploration: float = 0.2,
        tournament_size: int = 3,
    ) -> None:
        if n_islands < 1 or island_capacity < 1 or elite_size < 1 or tournament_size < 1:
            raise ValueError("n_islands, island_capacity, elite_size, tournament_size must be >= 1")
        self.n_islands = n_islands
        self.island_capacity = island_capacity
        self.elite_size = elite_size
        self.exploration = exploration
        self.tournament_size = tournament_size
        self._all: dict[str, Candidate] = {}  # insertion order
        self._order: dict[str, int] = {}
        self._members: list[list[str]] = [[] for _ in range(n_islands)]
        self._elites: list[str] = []
        self._pinned: str | None = None
        self._next_island = 0
        self._last_migration: int | None = None
        self._counter = 0

    # ---- storage ---------------------------------------------------------------------------

    def new_id(self) -> str:
        """A fresh short id ("c0001", "c0002", ...)."""
        while True:
            self._counter += 1
            cid = f"c{self._counter:04d}"
            if cid not in self._all:
                return cid

    def add(self, c: Candidate) -> list[Candidate]:
        """Record ``c``; adding an existing id again replaces it (pending -> verdict).

        Returns the copies this created (an accepted seed's copies in the other islands).
        """
        if not 0 <= c.island < self.n_islands:
            raise ValueError(f"island {c.island} out of range 0..{self.n_islands - 1}")
        if c.status not in STATUSES:
            raise ValueError(f"unknown status {c.status!r}")
        if c.id in self._all:
            for members in self._members:
                if c.id in members:
                    members.remove(c.id)
        else:
            self._order[c.id] = len(self._order)
        self._all[c.id] = c
        if c.status == "accepted":
            self._place(c)
        self._update_elites()
        copies: list[Candidate] = []
        if c.mutator == "seed" and c.copy_of is None and c.status == "accepted":
            if not any(o.copy_of == c.id for o in self._all.values()):
                for isl in range(self.n_islands):
                    if isl != c.island:
                        copies.append(self._copy(c, isl))
        return copies

    def get(self, cid: str) -> Candidate:
        return self._all[cid]

    def __contains__(self, cid: object) -> bool:
        return cid in self._all

    def __len__(self) -> int:
        return len(self._all)

    def candidates(self) -> list[Candidate]:
        """Every candidate ever added, in insertion order."""
        return list(self._all.values())

    def members(self, island: int) -> list[Candidate]:
        """The accepted candidates currently living in ``island``."""
        return [self._all[i] for i in self._members[island]]

    def elites(self) -> list[Candidate]:
        """Top ``elite_size`` accepted candidates over the whole run, distinct sources."""
        return [self._all[i] for i in self._elites]

    def best(self, island: int | None = None) -> Candidate | None:
        pool = self._all.values() if island is None else self.members(island)
        ranked = sorted((c for c in pool if c.status == "accepted"), key=self._rank, reverse=True)
        return ranked[0] if ranked else None

    def counts(self, seeds: bool = True) -> dict[str, dict[str, Any]]:
        """The run's one tally of verdicts, over evaluated candidates (copies are not
        evaluations): ``{"by_status": {...}, "by_reason": {...}, "by_mutator": {mutator:
        {"evaluated", "accepted"}}}``. ``seeds=False`` counts the children only (no seed,
        no generation-0 attempt), as the report and ``GenerationDone`` do."""
        by_status = dict.fromkeys(STATUSES, 0)
        by_reason: dict[str, int] = {}
        by_mutator: dict[str, dict[str, int]] = {}
        for c in self._all.values():
            if c.copy_of is not None or (not seeds and c.mutator == "seed"):
                continue
            by_status[c.status] = by_status.get(c.status, 0) + 1
            if c.status == "rejected":
                reason = c.reason or "unknown"
                by_reason[reason] = by_reason.get(reason, 0) + 1
            if c.status != "pending":
                row = by_mutator.setdefault(c.mutator, {"evaluated": 0, "accepted": 0})
                row["evaluated"] += 1
                row["accepted"] += c.status == "accepted"
        return {"by_status": by_status, "by_reason": dict(sorted(by_reason.items())),
                "by_mutator": by_mutator}

    # ---- selection -------------------------------------------------------------------------

    def pin(self, cid: str) -> None:
        """Force the next ``select_parent`` to return ``cid`` (once). It must be accepted."""
        c = self._all.get(cid)
        if c is None or c.status != "accepted":
            raise ValueError(f"cannot pin {cid}: not an accepted candidate")
        self._pinned = cid

    def unpin(self) -> None:
        self._pinned = None

    @property
    def pinned(self) -> str | None:
        return self._pinned

    def select_parent(self, rng: random.Random) -> Candidate:
        """An accepted parent. Islands take turns (round-robin over non-empty ones); inside the
        island, with probability ``exploration`` a uniform pick among non-elites, otherwise a
        tournament. Raises LookupError when no candidate is accepted yet."""
        if self._pinned is not None:
            c = self._all.get(self._pinned)
            self._pinned = None
            if c is not None and c.status == "accepted":
                return c
        island = self._next_nonempty_island()
        members = self.members(island)
        if rng.random() < self.exploration:
            elite = set(self._elites)
            pool = [c for c in members if c.id not in elite] or members
            return rng.choice(pool)
        entrants = rng.sample(members, min(self.tournament_size, len(members)))
        return max(entrants, key=self._rank)

    def inspirations(self, parent: Candidate, rng: random.Random, k: int = 2) -> list[Candidate]:
        """Up to ``k`` accepted candidates other than the parent (nor copies of its source):
        the global best first, then others, preferring other islands, in random order."""
        pool: dict[str, Candidate] = {}  # one per distinct source, the best-ranked
        for c in sorted(self._accepted(), key=self._rank, reverse=True):
            if c.id != parent.id and c.source != parent.source and c.source not in pool:
                pool[c.source] = c
        ranked = list(pool.values())
        if not ranked or k <= 0:
            return []
        chosen = [ranked[0]]
        rest = ranked[1:]
        far = [c for c in rest if c.island != parent.island]
        near = [c for c in rest if c.island == parent.island]
        rng.shuffle(far)
        rng.shuffle(near)
        chosen.extend((far + near)[: k - 1])
        return chosen

    # ---- migration -------------------------------------------------------------------------

    def migrate(self, rng: random.Random) -> list[Candidate]:
        """Ring migration: copy each island's best into the next island unless that island
        already holds the same source. Returns the migrants created."""
        if self.n_islands < 2:
            return []
        bests = [self.best(i) for i in range(self.n_islands)]
        migrants: list[Candidate] = []
        for i, c in enumerate(bests):
            dest = (i + 1) % self.n_islands
            if c is None or any(m.source == c.source for m in self.members(dest)):
                continue
            migrants.append(self._copy(c, dest))
        return migrants

    def maybe_migrate(self, generation: int, rng: random.Random, interval: int) -> list[Candidate]:
        """Migrate once when ``generation`` is a positive multiple of ``interval``."""
        if interval <= 0 or generation <= 0 or generation % interval:
            return []
        if self._last_migration == generation:
            return []
        self._last_migration = generation
        return self.migrate(rng)

    # ---- checkpoints -----------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {
            "n_islands": self.n_islands,
            "island_capacity": self.island_capacity,
            "elite_size": self.elite_size,
            "exploration": self.exploration,
            "tournament_size": self.tournament_size,
            "candidates": [c.to_dict() for c in self._all.values()],
            "members": [list(m) for m in self._members],
            "pinned": self._pinned,
            "next_island": self._next_island,
            "last_migration": self._last_migration,
            "counter": self._counter,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Population:
        pop = cls(
            n_islands=data["n_islands"],
            island_capacity=data["island_capacity"],
            elite_size=data["elite_size"],
            exploration=data["exploration"],
            tournament_size=data["tournament_size"],
        )
        for d in data["candidates"]:
            c = Candidate.from_dict(d)
            pop._order[c.id] = len(pop._order)
            pop._all[c.id] = c
        pop._members = [[i for i in m if i in pop._all] for m in data["members"]]
        pop._pinned = data.get("pinned")
        pop._next_island = data.get("next_island", 0)
        pop._last_migration = data.get("last_migration")
        pop._counter = data.get("counter", len(pop._all))
        pop._update_elites()
        return pop

    # ---- internals -------------------------------------------------------------------------

    def _rank(self, c: Candidate) -> tuple[float, int]:
        """Sort key: fitness, then the earlier candidate wins a tie."""
        return (c.fitness if c.fitness is not None else float("-inf"), -self._order[c.id])

    def _accepted(self) -> list[Candidate]:
        return [c for c in self._all.values() if c.status == "accepted"]

    def _place(self, c: Candidate) -> None:
        members = self._members[c.island]
        members.append(c.id)
        if len(members) > self.island_capacity:
            keep = {self._pinned}
            evictable = [self._all[i] for i in members if i not in keep]
            worst = min(evictable, key=self._rank)
            members.remove(worst.id)

    def _copy(self, c: Candidate, island: int) -> Candidate:
        data = c.to_dict()
        data.update(
            id=self.new_id(), island=island, parent_id=c.id,
            copy_of=c.copy_of or c.id,  # a copy of a copy names the program itself
            created=time.time())
        copy = Candidate.from_dict(data)
        self._order[copy.id] = len(self._order)
        self._all[copy.id] = copy
        self._place(copy)
        self._update_elites()
        return copy

    def _update_elites(self) -> None:
        elites: list[str] = []
        sources: set[str] = set()
        for c in sorted(self._accepted(), key=self._rank, reverse=True):
            if c.source in sources:
                continue
            sources.add(c.source)
            elites.append(c.id)
            if len(elites) == self.elite_size:
                break
        self._elites = elites

    def _next_nonempty_island(self) -> int:
        for step in range(self.n_islands):
            island = (self._next_island + step) % self.n_islands
            if self._members[island]:
                self._next_island = (island + 1) % self.n_islands
                return island
        raise LookupError("no accepted candidate to select a parent from")
