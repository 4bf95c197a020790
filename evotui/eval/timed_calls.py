"""The timed calls of an evaluation: the input sets they rotate over, what happens between
two calls, and which of their outputs the judge gets to see.

Before each prepared call (warm-up and sampled; ``prepare``), outside the timed events:
- the model's weights are compared with a copy (``weight_guard``);
- the previous call's outputs are released poisoned (``op_policy.poison_released``): no call
  finds an earlier answer in the block the allocator hands it;
- the next set gets entirely new values (``perturb.changed_seed``), no version counter
  moving.

Not only the last timed call is judged (a candidate told the prepared calls from the
timer's others and computed half the rows in them): on the CPU every one of
the few; on a GPU one prepared call picked at random (``Audit``).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from evotui.eval.messages import Audited, Checked, Meta
from evotui.eval.op_policy import PLAIN_TENSOR_TYPES, poison_released, storages
from evotui.eval.perturb import changed_seed, replay, values_seed
from evotui.eval.weight_guard import WeightGuard

Dump = Callable[[list[Any], str], list[Meta]]  # (values, file prefix) -> records
# a set's tensors get the values generated from a seed, no version counter moving
Refill = Callable[[list[Any], int], None]


def as_outputs(out: Any) -> list[Any]:
    """A forward's result as a list of outputs. Only an exact tuple or list is unpacked: a
    subclass's ``__iter__`` would run the candidate's code outside the op policy (it then
    counts as one output, and the judge finds it is not a tensor)."""
    return list(out) if type(out) in (tuple, list) else [out]


class Audit:
    """One of the offered calls, each kept with the same chance (reservoir sampling): its
    set's seed, the perturbations it saw, and a copy of its outputs. A copy it lets go of is
    poisoned like a released output (it holds an answer)."""

    def __init__(self, rng: random.Random, protected: set[int]) -> None:
        self.rng, self.protected, self.offered = rng, protected, 0
        self.kept: tuple[int, int, list[Any]] | None = None

    def offer(self, seed: int, perturbed: int, outputs: list[Any]) -> None:
        self.offered += 1
        if self.rng.randrange(self.offered) == 0:
            self._drop()
            self.kept = (seed, perturbed,
                         [o.clone() if type(o) in PLAIN_TENSOR_TYPES else o for o in outputs])

    def take(self, dump: Callable[[list[Any]], list[Meta]]) -> Audited | None:
        if self.kept is None:
            return None
        seed, perturbed, outputs = self.kept
        entry = Audited(seed, tuple(dump(outputs)), perturbed, self.offered)
        self._drop()
        return entry

    def _drop(self) -> None:
        if self.kept is not None:
            poison_released(self.kept[2], self.protected)
            self.kept = None


@dataclass(frozen=True)
class Judged:
    earlier_outputs: tuple[Checked, ...]  # judge_every_call: each call but the last
    audited: Audited | None
    weights_changed: tuple[str, ...]  # the parameters a kernel wrote into


class TimedCalls:
    """``call`` runs the model on the next input set; ``prepare`` readies the one after.
    One per model: an evaluation's, and each of an A/B's (which share sets and changes)."""

    def __init__(self, model: Any, sets: list[list[Any]], seeds: list[int], *,
                 judge_every_call: bool, audit_seed: int, dump: Dump,
                 refill: Refill, changes: list[int] | None = None) -> None:
        self.model, self.sets, self.seeds, self.dump = model, sets, seeds, dump
        self.refill = refill
        self.judge_every_call = judge_every_call
        # changes of each set's values (perturb.values_seed); an A/B's models share one list,
        # as they share the sets
        self.perturbed = [0] * len(sets) if changes is None else changes
        self.calls, self.last = 0, 0
        self.saw = (seeds[0], 0)
        self.out: Any = None
        self.prepared = self.from_prepared = False
        self.protected = storages([v for values in sets for v in values])
        self.earlier: list[Checked] = []
        self.audit = Audit(random.Random(f"audit:{audit_seed}"), self.protected)
        self.weights = WeightGuard(model)

    def next_set(self) -> int:
        return self.calls % len(self.sets)

    def prepare(self) -> None:
        self.weights.check()
        if self.out is not None:
            outs, (seed, changes) = as_outputs(self.out), self.saw
            if self.judge_every_call:
                outputs = self.dump(outs, f"timed{len(self.earlier)}_out")
                self.earlier.append(Checked(seed, tuple(outputs), changes))
            elif self.from_prepared:
                self.audit.offer(seed, changes, outs)
            poison_released(outs, self.protected)
            self.out = None
        k = self.next_set()
        self.perturbed[k] += 1
        self.refill(self.sets[k], changed_seed(self.seeds[k], self.perturbed[k]))
        self.prepared = True

    def call(self) -> None:
        k = self.next_set()
        self.calls += 1
        self.last = k
        # the values it sees (in an A/B the other model changes them before its next call)
        self.saw = (self.seeds[k], self.perturbed[k])
        self.from_prepared, self.prepared = self.prepared, False
        self.out = self.model(*self.sets[k])

    def finish(self) -> Judged:
        """After the last timed call: what the judge checks besides the last output."""
        self.weights.check()
        return Judged(tuple(self.earlier),
                      self.audit.take(lambda values: self.dump(values, "audited_out")),
                      tuple(self.weights.changed_names()))


class ValueRounds:
    """The calls of the value-cache guard (``CudaTimer.fresh_vs_same``): new values, the same
    values written again, those with one element changed. Like the timed calls, consecutive
    calls use different input sets (a GEMM recomputed only the changed row blocks
    when its input was another tensor than the previous call's, and computed everything when
    the same tensor came twice — as it did here, so the guard never saw the patching).
    Each set's values at its last call are kept as (seed, perturbations), so "the same
    values" are those that set held when it was last used."""

    def __init__(self, model: Any, calls: TimedCalls, refill: Refill,
                 fresh_seed: Callable[[int], int]) -> None:
        self.model, self.sets, self.refill, self.fresh_seed = model, calls.sets, refill, fresh_seed
        # (seed of its values, one-element changes on top): as the timed calls left them
        self.values = [(values_seed(seed, calls.perturbed[j]), 0) for j, seed in enumerate(calls.seeds)]
        self.protected = calls.protected
        self.current = calls.next_set()
        self.count = 0
        self.held: list[Any] = []

    def refresh(self, i: int, kind: str) -> None:
        while self.held:  # released as between timed calls
            poison_released(as_outputs(self.held.pop()), self.protected)
        # every set in turn, shifted each round so that each kind meets every set
        self.current = j = (self.count + self.count // 3) % len(self.sets)
        self.count += 1
        seed, perturbations = self.values[j]
        if kind == "new":
            seed, perturbations = self.fresh_seed(i), 0
        elif kind == "patch":
            perturbations += 1
        # the same generation and copy before every kind: only the values differ
        self.refill(self.sets[j], seed)
        replay(self.sets[j], seed, perturbations)
        self.values[j] = (seed, perturbations)

    def call(self) -> None:
        self.held.append(self.model(*self.sets[self.current]))
