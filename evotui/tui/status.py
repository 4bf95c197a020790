"""The status line: what runs where, how fast, how well, and whether it is paused."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from evotui.tui.views import StatusView, best_summary, device_label, model_label

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
MAX_LINES = 4  # the message is cut beyond this


def render_status(s: StatusView, state: str) -> Text:
    sep = (" · ", "dim")
    text = Text(no_wrap=False, overflow="fold")
    text.append(s.task or "…", "bold")
    text.append(*sep)
    text.append(device_label(s) or "…", "yellow" if s.interpreter else "")
    text.append(*sep)
    text.append(s.backend)
    text.append(*sep)
    text.append(model_label(s.mutator, s.model) if s.started else "…")
    text.append(*sep)
    text.append(f" {state} ", STATE_STYLES.get(state, "bold"))
    text.append(*sep)
    text.append(f"gen {s.generation}  {s.evaluated}/{s.iterations} evaluated")
    if s.in_flight:
        text.append(f" (+{s.in_flight} in flight)", "dim")
    text.append(*sep)
    text.append(f"{s.evals_per_minute:.1f} evals/min")
    text.append(*sep)
    text.append(f"{s.tokens_per_s:.1f} tok/s")
    text.append("\n")
    text.append(best_summary(s.best), "bold green" if s.best else "dim")
    if s.message:
        text.append(*sep)
        text.append(s.message, LEVEL_STYLES.get(s.level, ""))
    return text


class StatusLine(Static):
    """Two lines at the top of the screen (more when the terminal is narrow)."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__("", **kwargs)  # type: ignore[arg-type]
        self._shown: tuple[StatusView, str, int] | None = None
        self._lines = 0
        self.state = "starting…"
        self.text = ""  # what it shows, as plain text

    def show(self, status: StatusView, state: str) -> None:
        width = max(1, self.content_region.width or self.app.size.width - 2)
        if self._shown == (status, state, width):
            return
        self._shown = (status, state, width)
        self.state = state
        text = render_status(status, state)
        self.text = text.plain
        lines = min(MAX_LINES, len(text.wrap(self.app.console, width)))
        if lines != self._lines:  # a layout pass only when the height changes
            self._lines = lines
            self.styles.height = lines
        self.update(text, layout=False)
