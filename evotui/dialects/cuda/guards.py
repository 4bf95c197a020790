"""Guard bands: during the correctness trials every buffer the harness allocates for a CUDA
candidate (outputs and scratch) sits between two bands of ``GUARD_BYTES`` random bytes. The
worker reports the bands' bytes after the call; the judge regenerates them from the trial's
seed and compares (a worker never decides, invariant 2). A changed band is an out-of-bounds
write: ``out_of_bounds``.

The pattern is drawn on the CPU (bit-identical in every process) from a seed derived from the
trial seed and the band's index: band ``2k`` is before buffer ``k``, band ``2k + 1`` after it.
"""

from __future__ import annotations

from typing import Any

GUARD_BYTES = 64 * 1024  # a multiple of 256: buffers keep cudaMalloc's alignment
_MIX = 0x9E3779B97F4A7C15


def band_seed(trial_seed: int, index: int) -> int:
    return (int(trial_seed) * 1_000_003 + _MIX + 7919 * index) % (2**63 - 1)


def pattern(trial_seed: int, index: int, nbytes: int = GUARD_BYTES) -> Any:
    """The band's expected bytes (a CPU uint8 tensor)."""
    import torch

    g = torch.Generator().manual_seed(band_seed(trial_seed, index))
    return torch.randint(0, 256, (nbytes,), dtype=torch.uint8, generator=g)


def describe_damage(expected: Any, got: Any, index: int, label: str) -> str:
    """One line: which band of which buffer changed, and where."""
    changed = (expected != got.to(expected.device)).nonzero()
    n = int(changed.numel())
    side = "before" if index % 2 == 0 else "after"
    if n == 0:
        return ""
    first = int(changed[0])
    offset = -(expected.numel() - first) if side == "before" else first
    return (f"{n} bytes {side} `{label}` were overwritten (first at byte offset {offset:+d} "
            f"from the buffer's {'start' if side == 'before' else 'end'})")
