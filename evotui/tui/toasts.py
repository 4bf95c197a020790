"""Which engine notices become toasts: a toast is for a rare event, never a stream.

Failed model answers never get here (the feed counts them in the status line and the LLM
panel). Of the rest, errors and warnings may toast, but never more than ``max_on_screen`` at
once (toasts stack over the panels), and the same kind of notice (ids and figures aside) at
most once a minute; whatever is not toasted still shows in the status line.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field

MAX_ON_SCREEN = 2
REPEAT_S = 60.0
_VARYING = re.compile(r"\bc\d{3,}\b|\d+(\.\d+)?")


def kind_of(message: str) -> str:
    """The notice with its ids and figures blanked: what "the same notice" means."""
    return _VARYING.sub("#", message.splitlines()[0] if message else "")[:80]


@dataclass
class ToastGate:
    clock: Callable[[], float] = time.monotonic
    max_on_screen: int = MAX_ON_SCREEN
    repeat_s: float = REPEAT_S
    _until: list[float] = field(default_factory=list)  # when each toast on screen goes
    _last: dict[str, float] = field(default_factory=dict)  # kind → when it last toasted

    def allow(self, message: str, level: str, timeout: float) -> bool:
        """Whether to toast this notice now (and, if so, count it as on screen)."""
        if level not in ("warning", "error"):
            return False
        now = self.clock()
        self._until = [t for t in self._until if t > now]
        kind = kind_of(message)
        last = self._last.get(kind)
        if len(self._until) >= self.max_on_screen or (
                last is not None and now - last < self.repeat_s):
            return False
        self._until.append(now + timeout)
        self._last[kind] = now
        return True
