"""Pacing for panels that are dear to redraw: apply the latest value at most every so often.

The first value is applied at once; later ones within ``interval`` seconds wait for a timer
and only the last of them is drawn (a trailing edge, so the panel always ends up current).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Generic, TypeVar

from textual.timer import Timer
from textual.widget import Widget

T = TypeVar("T")
_UNSET = object()


class Paced(Generic[T]):
    def __init__(self, widget: Widget, interval: float, apply: Callable[[T], None]) -> None:
        self.widget = widget
        self.interval = interval
        self.apply = apply
        self._last = float("-inf")
        self._pending: object = _UNSET
        self._timer: Timer | None = None

    def __call__(self, value: T) -> None:
        self._pending = value
        wait = self.interval - (time.monotonic() - self._last)
        if wait <= 0:
            self.flush()
        elif self._timer is None:
            self._timer = self.widget.set_timer(wait, self.flush)

    def flush(self) -> None:
        self._timer = None
        if self._pending is _UNSET:
            return
        value, self._pending = self._pending, _UNSET
        self._last = time.monotonic()
        self.apply(value)  # type: ignore[arg-type]
