"""The CUDA dialect's launch recorder: a ``Recorder`` (``evotui.dialects.base``), as the
Triton one is, with guard bands.

There is nothing to patch: every launch goes through the harness's own ``ModelNew`` adapter
(``model.py``), which reports to this recorder. ``on_enter``/``on_exit`` bracket the whole
adapter call, because all of its host code (allocation, guard bands, scratch zeroing) is the
harness's own, so the torch op policy has nothing of the candidate's to watch.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from evotui.dialects.base import Recorder


class CudaLaunchRecorder(Recorder):
    guards_buffers = True  # the adapter allocates every buffer: it can surround them

    def __init__(self) -> None:
        self.launches: Counter[str] = Counter()
        self.ghost = False  # when True, kernel launches are skipped ("ghost replay")
        self.on_enter: Callable[[], None] = lambda: None
        self.on_exit: Callable[[], None] = lambda: None
        # guard bands: set ``guard_seed`` before a checked call; the adapter then surrounds each
        # buffer with bands and appends (label, band tensor) pairs to ``guards``
        self.guard_seed: int | None = None
        self.guards: list[tuple[str, Any]] = []
        # the worker's compile applies the PTX rules (``ptx_rules``) unless the pool was made
        # with static_checks=False (the harness's own tests of the runtime checks)
        self.check_ptx = True

    def install(self) -> None:
        """Nothing to install: the adapter reports its launches itself."""

    def reset(self) -> None:
        self.launches.clear()

    @property
    def total(self) -> int:
        return sum(self.launches.values())

    def arm_guards(self, seed: int) -> None:
        self.guard_seed, self.guards = seed, []

    def take_guards(self) -> list[tuple[str, Any]]:
        """The bands of the last checked call; disarms."""
        bands, self.guards, self.guard_seed = self.guards, [], None
        return bands
