"""The status line: what runs where, how fast, how well, and whether it is paused.

Always two lines, whatever the width: the first says what runs (task, device, model), its
state as the engine has it now (paused with the evaluations still finishing, stopping) and
the counts; the second the best so far, the model's unusable answers and the latest message.
Less important parts are left out first when the terminal is narrow.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import Static

from evotui.tui.views import StatusView, best_summary, device_label, failures_label, model_label

STATE_STYLES = {
    "running": "bold green",
    "paused": "bold black on yellow",
    "stopping…": "bold yellow",
    "starting…": "bold cyan",
    "completed": "bold cyan",
    "exhausted": "bold cyan",
    "stopped": "bold cyan",
    "failed": "bold white on red",
}
LEVEL_STYLES = {"info": "dim", "warning": "yellow", "error": "bold red"}
SEP = " · "
Part = tuple[str, str, int]  # (text, style, priority: 0 always shown, higher dropped first)


def _fit(parts: list[Part], width: int) -> Text:
    """The parts that fit in ``width`` cells, dropping the highest priorities first; the
    rest is cut with an ellipsis."""
    for limit in (3, 2, 1, 0):
        kept = [p for p in parts if p[2] <= limit]
        if sum(cell_len(t) for t, _, _ in kept) <= width or limit == 0:
            break
    text = Text(no_wrap=True, overflow="ellipsis", end="")
    for t, style, _ in kept:
        text.append(t, style)
    text.truncate(max(1, width), overflow="ellipsis")
    return text


def _sep(parts: list[Part], prio: int) -> None:
    parts.append((SEP, "dim", prio))


def first_line(s: StatusView, state: str, in_flight: int, width: int) -> Text:
    """With the device in full where it fits, else in short ("cpu interpreter", "H200")."""
    full = device_label(s) or "…"
    text = _first_line(s, state, in_flight, width, full)
    if full in text.plain:
        return text
    short = "cpu interpreter" if s.interpreter else (
        s.device_name.removeprefix("NVIDIA ") or s.device or "…")
    return _first_line(s, state, in_flight, width, short)


def _first_line(s: StatusView, state: str, in_flight: int, width: int, device: str) -> Text:
    parts: list[Part] = [(s.task or "…", "bold", 0)]
    _sep(parts, 1)
    parts.append((device, "yellow" if s.interpreter else "", 1))
    _sep(parts, 3)
    parts.append((s.backend, "", 3))
    _sep(parts, 1)
    parts.append((model_label(s.mutator, s.model) if s.started else "…", "", 1))
    _sep(parts, 0)
    parts.append((f" {state} ", STATE_STYLES.get(state, "bold"), 0))
    if state == "paused" and in_flight:
        parts.append((f" {in_flight} in flight finish first", "yellow", 0))
    _sep(parts, 0)
    parts.append((f"gen {s.generation}  ", "", 3))
    parts.append((f"{s.evaluated}/{s.iterations} evaluated", "", 0))
    if in_flight and state != "paused":
        parts.append((f" (+{in_flight} in flight)", "dim", 2))
    _sep(parts, 2)
    parts.append((f"{s.evals_per_minute:.1f} evals/min", "", 2))
    _sep(parts, 2)
    parts.append((f"{s.tokens_per_s:.1f} tok/s", "", 2))
    return _fit(parts, width)


def second_line(s: StatusView, width: int) -> Text:
    parts: list[Part] = [(best_summary(s.best, compact=width < 120),
                          "bold green" if s.best else "dim", 0)]
    failures = failures_label(s, limit=3 if width >= 150 else 0)
    if failures:
        _sep(parts, 0)
        parts.append((failures, "yellow", 0))
    if s.message:
        _sep(parts, 1)
        parts.append((s.message, LEVEL_STYLES.get(s.level, ""), 1))
    return _fit(parts, width)


def render_status(s: StatusView, state: str, in_flight: int = 0, width: int = 200) -> Text:
    text = first_line(s, state, in_flight, width)
    text.append("\n")
    text.append_text(second_line(s, width))
    return text


class StatusLine(Static):
    """Two lines at the top of the screen."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__("", **kwargs)  # type: ignore[arg-type]
        self._shown: tuple[StatusView, str, int, int] | None = None
        self.state = "starting…"
        self.text = ""  # what it shows, as plain text

    def show(self, status: StatusView, state: str, in_flight: int = 0) -> None:
        width = max(1, self.content_region.width or self.app.size.width - 2)
        key = (status, state, in_flight, width)
        if self._shown == key:
            return
        self._shown = key
        self.state = state
        text = render_status(status, state, in_flight, width)
        self.text = text.plain
        self.update(text, layout=False)
