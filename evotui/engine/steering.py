"""A model that repeats itself is steered: after a few answers in a row that gave no new
program (a duplicate, no code, an unchanged program, edits that did not apply, a syntax
error, a cut-off answer), the next prompt says what was already tried and asks for a
different kind of change, and the sampling temperature rises, bounded, one step per further
repeat. The first answer that yields a new program resets both.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

REPEAT_KINDS = frozenset({"duplicate", "no_code", "no_change", "patch_failed", "syntax_error",
                          "truncated"})
# kinds of change, and words that show a description is of that kind
CHANGE_KINDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("change the memory access (coalesced or vectorised loads, fewer passes over memory)",
     ("load", "store", "vector", "coalesc", "memory", "cache", "pass")),
    ("change how work is split (several rows or tiles per program, a persistent grid, "
     "a split reduction)", ("row", "tile", "program", "grid", "persistent", "split")),
    ("change the algorithm (fuse steps, a one-pass or online formula)",
     ("fuse", "fusion", "online", "one-pass", "single pass", "algorithm")),
    ("change the arithmetic (exp2, fewer divisions, fp32 accumulation only where needed)",
     ("exp", "div", "math", "precision", "fp32", "rsqrt", "accumul")),
    ("change the block sizes, warps or stages (the TUNABLES values)",
     ("block", "warp", "stage", "tunable", "num_")),
)


@dataclass(frozen=True)
class Steer:
    streak: int  # answers in a row without a new program
    kinds: tuple[str, ...]  # their failure kinds, oldest first
    tried: tuple[str, ...]  # what was already tried from this parent
    suggestions: tuple[str, ...]  # kinds of change not seen in ``tried``
    temperature: float


class Steering:
    def __init__(self, base_temperature: float = 0.7, step: float = 0.15,
                 ceiling: float = 1.2, after: int = 2, remember: int = 6) -> None:
        self.base = base_temperature
        self.step = step
        self.ceiling = ceiling
        self.after = after  # repeats in a row before the prompt is steered
        self._kinds: list[str] = []
        self._recent: deque[str] = deque(maxlen=remember)  # the repeated answers' descriptions

    @property
    def streak(self) -> int:
        return len(self._kinds)

    def failed(self, kind: str, description: str = "") -> None:
        """An answer without a new program; only repeats count (not a server outage)."""
        if kind not in REPEAT_KINDS:
            return
        self._kinds.append(kind)
        if description.strip():
            self._recent.append(description.strip())

    def succeeded(self) -> None:
        self._kinds.clear()
        self._recent.clear()

    def temperature(self) -> float | None:
        """The temperature for the next prompt; None: the model's configured one."""
        if self.streak < self.after:
            return None
        return round(min(self.ceiling, self.base + self.step * (self.streak - self.after + 1)), 3)

    def steer(self, tried_here: list[str]) -> Steer | None:
        """The nudge for the next prompt, given the descriptions of the parent's children."""
        temperature = self.temperature()
        if temperature is None:
            return None
        tried = tuple(dict.fromkeys(t for t in [*tried_here, *self._recent] if t))[-8:]
        text = " ".join(tried).lower()
        fresh = [k for k, words in CHANGE_KINDS if not any(w in text for w in words)]
        suggestions = tuple((fresh or [k for k, _ in CHANGE_KINDS])[:3])
        return Steer(self.streak, tuple(self._kinds[-6:]), tried, suggestions, temperature)


__all__ = ["CHANGE_KINDS", "REPEAT_KINDS", "Steer", "Steering"]
