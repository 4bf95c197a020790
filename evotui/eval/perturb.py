"""Inputs that change between timed calls, so that no timed call repeats the values of an
earlier one: a cache keyed on input values (or a fingerprint of them) gains nothing, and one
keyed on part of them returns a stale answer that the check of the last timed call sees.

Before each timed call, one element of every floating-point input of the set that call will
use takes the value of another element of the same tensor (so values stay in the task's
domain: no negative where a log follows). Which elements is a pure function of the set's
seed and the perturbation's index, so the judge replays them on inputs it generates itself.
Runs on the device, with no host sync, outside the timed events.
"""

from __future__ import annotations

import random
from typing import Any


def _unravel(flat_index: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    index = []
    for size in reversed(shape):
        index.append(flat_index % size)
        flat_index //= size
    return tuple(reversed(index))


def perturb(inputs: list[Any], seed: int, index: int) -> None:
    """Apply perturbation number ``index`` of the input set generated from ``seed``."""
    import torch

    rng = random.Random(f"evotui-perturb:{seed}:{index}")
    for t in inputs:
        if isinstance(t, torch.Tensor) and t.is_floating_point() and t.numel() > 1:
            target, source = rng.randrange(t.numel()), rng.randrange(t.numel())
            # written through another tensor on the same storage: the input's version
            # counter does not move (round 9: a candidate told perturbed calls, +1, from
            # the timer's unprepared ones, +0, and computed half the rows in the former)
            alias = torch.empty(0, dtype=t.dtype, device=t.device).set_(
                t.untyped_storage(), t.storage_offset(), t.size(), t.stride())
            alias[_unravel(target, tuple(t.shape))] = alias[_unravel(source, tuple(t.shape))]


def replay(inputs: list[Any], seed: int, count: int) -> None:
    """The state of a set after its first ``count`` perturbations."""
    for index in range(count):
        perturb(inputs, seed, index)
