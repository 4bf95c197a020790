"""The timed calls of an evaluation: the input sets they rotate over, what happens between
two calls, and which of their outputs the judge gets to see.

Before each prepared call (warm-up and sampled; ``prepare``), outside the timed events:
- the model's weights are compared with a copy (``weight_guard``);
- the previous call's outputs are released poisoned (``op_policy.poison_released``): no call
  finds an earlier answer in the block the allocator hands it;
- one element of the next set changes (``perturb``), with no version counter moving.

Not only the last timed call is judged (red team round 9: a candidate told the prepared
calls from the timer's others and computed half the rows in them): on the CPU every one of
the few; on a GPU one prepared call picked at random (``Audit``).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from evotui.eval.op_policy import PLAIN_TENSOR_TYPES, poison_released, storages
from evotui.eval.perturb import perturb
from evotui.eval.weight_guard import WeightGuard

Dump = Callable[[list[Any], str], list[dict[str, Any]]]  # (values, file prefix) -> records


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

    def take(self, dump: Callable[[list[Any]], list[dict[str, Any]]]) -> dict[str, Any] | None:
        if self.kept is None:
            return None
        seed, perturbed, outputs = self.kept
        entry = {"seed": seed, "perturbed": perturbed, "outputs": dump(outputs), "of": self.offered}
        self._drop()
        return entry

    def _drop(self) -> None:
        if self.kept is not None:
            poison_released(self.kept[2], self.protected)
            self.kept = None


class TimedCalls:
    """``call`` runs the model on the next input set; ``prepare`` readies the one after."""

    def __init__(self, model: Any, sets: list[list[Any]], seeds: list[int], *,
                 judge_every_call: bool, audit_seed: int, dump: Dump) -> None:
        self.model, self.sets, self.seeds, self.dump = model, sets, seeds, dump
        self.judge_every_call = judge_every_call
        self.perturbed = [0] * len(sets)  # perturbations applied to each set (the judge replays them)
        self.calls, self.last = 0, 0
        self.out: Any = None
        self.prepared = self.from_prepared = False
        self.protected = storages([v for values in sets for v in values])
        self.earlier: list[dict[str, Any]] = []
        self.audit = Audit(random.Random(f"audit:{audit_seed}"), self.protected)
        self.weights = WeightGuard(model)

    def next_set(self) -> int:
        return self.calls % len(self.sets)

    def prepare(self) -> None:
        self.weights.check()
        if self.out is not None:
            outs, k = as_outputs(self.out), self.last
            if self.judge_every_call:
                self.earlier.append({"seed": self.seeds[k], "perturbed": self.perturbed[k],
                                     "outputs": self.dump(outs, f"timed{len(self.earlier)}_out")})
            elif self.from_prepared:
                self.audit.offer(self.seeds[k], self.perturbed[k], outs)
            poison_released(outs, self.protected)
            self.out = None
        k = self.next_set()
        perturb(self.sets[k], self.seeds[k], self.perturbed[k])
        self.perturbed[k] += 1
        self.prepared = True

    def call(self) -> None:
        k = self.next_set()
        self.calls += 1
        self.last = k
        self.from_prepared, self.prepared = self.prepared, False
        self.out = self.model(*self.sets[k])

    def finish(self) -> dict[str, Any]:
        """After the last timed call: what the judge checks besides the last output."""
        self.weights.check()
        return {"earlier_outputs": self.earlier,
                "audited": self.audit.take(lambda values: self.dump(values, "audited_out")),
                "weights_changed": self.weights.changed_names()}
