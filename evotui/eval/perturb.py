"""Inputs that change between timed calls.

Before each timed call the set it will use gets entirely new values (``changed_seed``: the
task's own generator, so values stay in its domain), written through another tensor on the
same storage (``write_quietly``: no version counter moves). With one element changed per
call, a GEMM could recompute only the row blocks that changed since it last saw the tensor,
with every output right; with all values new, no cache, patch or incremental update gains
anything.

``perturb`` remains for the value-cache rounds' "one element changed" kind: one element of
every floating-point input takes the value of another element of the same tensor, a pure
function of the seed and an index (``replay`` repeats a sequence of them).
"""

from __future__ import annotations

import hashlib
import random
from typing import Any


def changed_seed(seed: int, index: int) -> int:
    """The seed of input set ``seed``'s values after its ``index``-th change (index >= 1);
    the judge regenerates them from it."""
    digest = hashlib.sha256(f"evotui-change:{seed}:{index}".encode()).digest()
    return int.from_bytes(digest[:8], "little") % 2**63


def graph_check_seed(recheck_seed: int) -> int:
    """The values every timed set gets before the timed graph is replayed once more for the
    judge (graph-timed calls); unlike any other set's."""
    return changed_seed(recheck_seed ^ 0x6A09E667F3BCC908, 1)


def values_seed(seed: int, changes: int) -> int:
    """The seed a set generated from ``seed`` holds the values of after ``changes`` changes."""
    return seed if changes == 0 else changed_seed(seed, changes)


def _alias(t: Any) -> Any:
    """Another tensor on ``t``'s storage, with ``t``'s view of it: writing through it leaves
    ``t``'s version counter where it was (a candidate could tell the calls so prepared)."""
    import torch

    return torch.empty(0, dtype=t.dtype, device=t.device).set_(
        t.untyped_storage(), t.storage_offset(), t.size(), t.stride())


def write_quietly(live: list[Any], values: list[Any]) -> None:
    """``values`` into the tensors of ``live``, their version counters unmoved."""
    import torch

    for t, v in zip(live, values, strict=True):
        if isinstance(t, torch.Tensor):
            _alias(t).copy_(v)


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
            alias = _alias(t)  # a moved version counter told these calls apart
            alias[_unravel(target, tuple(t.shape))] = alias[_unravel(source, tuple(t.shape))]


def replay(inputs: list[Any], seed: int, count: int) -> None:
    """The state of a set after its first ``count`` perturbations."""
    for index in range(count):
        perturb(inputs, seed, index)
