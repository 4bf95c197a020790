"""The model-free mutator: move one or two tunables to a neighbouring choice — or, when
advice suggests a move (``follow``), that move first."""

from __future__ import annotations

import itertools
import random
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evotui.engine.tunables import Tunable, TunableSource, config_key, neighbours

if TYPE_CHECKING:
    from evotui.memory.suggest import TunableHint


@dataclass(frozen=True)
class ParamMutation:
    source: str  # the child's full source
    changes: dict[str, tuple[int, int]]  # name -> (old, new), in source order
    description: str  # "BLOCK_SIZE 1024→4096, NUM_WARPS 4→8"
    key: str  # the child's ``config_key``, carried so that nobody computes it again


def describe(changes: dict[str, tuple[int, int]]) -> str:
    return ", ".join(f"{name} {old}→{new}" for name, (old, new) in changes.items())


def _base(name: str) -> str:
    from evotui.memory.suggest import base_name

    return base_name(name)


def _towards(t: Tunable, new: int, direction: int) -> int | None:
    """The value a hint ``→ new`` gives tunable ``t``: ``new`` when it is a choice, else the
    next choice towards it; None when ``t`` is there already or past it."""
    if t.value == new or len(t.choices) < 2:
        return None
    way = 1 if new > t.value else -1
    if direction and way != direction:
        return None  # the advice says "larger" and this one is larger already
    if new in t.choices:
        return new
    step = [c for c in t.choices if (c > t.value if way > 0 else c < t.value)]
    if not step:
        return None
    return min(step) if way > 0 else max(step)


def _position(t: Tunable, value: int) -> float:
    """Index of ``value`` in the choices (between two indices when it is not a choice)."""
    i = bisect_left(t.choices, value)
    return float(i) if i < len(t.choices) and t.choices[i] == value else i - 0.5


class ParamMutator:
    """Changes 1..max_changes tunables: mostly one step in the choice list, sometimes a jump.

    ``tried`` holds ``config_key``s of programs already evaluated (or queued); the parent's own
    key is always avoided. The result depends only on the source, ``tried`` and the rng state.
    """

    name = "param"

    def __init__(
        self,
        max_changes: int = 2,
        jump_prob: float = 0.2,
        max_attempts: int = 48,
        exhaustive_limit: int = 512,
    ) -> None:
        if max_changes < 1:
            raise ValueError("max_changes must be at least 1")
        self.max_changes = max_changes
        self.jump_prob = jump_prob
        self.max_attempts = max_attempts
        self.exhaustive_limit = exhaustive_limit

    def mutate(
        self, source: str, rng: random.Random, tried: set[str] | None = None, key: str = ""
    ) -> ParamMutation | None:
        """A child differing in 1..max_changes tunables, or None when no untried one is found.
        ``key``: the parent's ``config_key`` when the caller has it."""
        try:
            parsed = TunableSource(source)
        except SyntaxError:
            return None
        movable = [t for t in parsed.tunables if len(t.choices) > 1 or t.value not in t.choices]
        if not movable:
            return None
        avoid = set(tried or ()) | {key or config_key(source)}

        for _ in range(self.max_attempts):
            k = rng.randint(1, min(self.max_changes, len(movable)))
            picked = sorted(rng.sample(range(len(movable)), k))
            values = {movable[i].name: self._move(movable[i], rng) for i in picked}
            child = parsed.with_values(values)
            key = config_key(child)
            if key not in avoid:
                return self._result(parsed, child, values, key)
            avoid.add(key)

        # Random proposals keep hitting tried configs: enumerate the rest when there are few.
        options = list(itertools.islice(self._all_moves(movable), self.exhaustive_limit + 1))
        if len(options) > self.exhaustive_limit:
            return None  # large and mostly tried: call it exhausted
        by_name = {t.name: t for t in movable}
        ranked = sorted(
            options,
            key=lambda vals: (
                sum(
                    abs(_position(by_name[n], v) - _position(by_name[n], by_name[n].value))
                    for n, v in vals.items()
                ),
                rng.random(),
            ),
        )
        for values in ranked:
            child = parsed.with_values(values)
            key = config_key(child)
            if key not in avoid:
                return self._result(parsed, child, values, key)
        return None

    def follow(self, source: str, hints: Sequence[TunableHint],
               tried: set[str] | None = None, key: str = "") -> ParamMutation | None:
        """The child that makes the suggested moves on this program's tunables, or None when
        none applies (no such tunable, already there or past it) or it was tried already.

        A hint names a tunable exactly or by its last part (``num_warps`` fits
        ``launch:k:num_warps``). It sets the suggested value when it is a choice; otherwise
        it moves one step towards it. When the hint knows its direction (old → new) and
        this program is already further along that way, it does not apply.
        """
        try:
            parsed = TunableSource(source)
        except SyntaxError:
            return None
        values: dict[str, int] = {}
        for hint in hints:
            exact = [t for t in parsed.tunables if t.name == hint.name]
            for t in exact or [t for t in parsed.tunables if _base(t.name) == hint.base]:
                target = _towards(t, hint.new, hint.direction)
                if target is not None and t.name not in values:
                    values[t.name] = target
        if not values:
            return None
        child = parsed.with_values(values)
        child_key = config_key(child)
        if child_key in (set(tried or ()) | {key or config_key(source)}):
            return None
        return self._result(parsed, child, values, child_key)

    def _move(self, t: Tunable, rng: random.Random) -> int:
        near = neighbours(t)
        if near and rng.random() >= self.jump_prob:
            return rng.choice(near)
        return rng.choice([c for c in t.choices if c != t.value])

    def _all_moves(self, movable: list[Tunable]) -> Iterator[dict[str, int]]:
        for k in range(1, min(self.max_changes, len(movable)) + 1):
            for group in itertools.combinations(movable, k):
                others = [[c for c in t.choices if c != t.value] for t in group]
                for combo in itertools.product(*others):
                    yield {t.name: v for t, v in zip(group, combo, strict=True)}

    @staticmethod
    def _result(parsed: TunableSource, child: str, values: dict[str, int],
                key: str) -> ParamMutation:
        changes = {t.name: (t.value, values[t.name]) for t in parsed.tunables if t.name in values}
        return ParamMutation(source=child, changes=changes, description=describe(changes),
                             key=key)
