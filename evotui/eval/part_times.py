"""Seconds spent in named parts of one request, for the figures that say where a process's
time goes (the judge's request, shown as ``judge:PART`` among an evaluation's phases)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager


class PartTimes:
    """On a GPU give ``sync`` (the device's synchronize): each part then ends once the work
    it queued is done, so the device's time is counted where it was asked for. A part inside
    another counts in the outer one."""

    def __init__(self, sync: Callable[[], None] | None = None) -> None:
        self.seconds: dict[str, float] = {}
        self._sync = sync
        self._inside = False

    @contextmanager
    def part(self, name: str) -> Iterator[None]:
        if self._inside:
            yield
            return
        self._inside = True
        start = time.perf_counter()
        try:
            yield
        finally:
            if self._sync is not None:
                self._sync()
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - start
            self._inside = False
