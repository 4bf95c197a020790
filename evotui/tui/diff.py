"""The Diff panel: parent → child as a unified diff, highlighted by Pygments (via rich)."""

from __future__ import annotations

from typing import Any

from rich.console import RenderableType
from rich.syntax import Syntax
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from evotui.tui.pacing import Paced
from evotui.tui.views import CandidateRow

REDRAW_S = 0.25  # highlighting a diff costs; while candidates stream in, a few a second
MAX_DIFF_CHARS = 60_000


def render_diff(row: CandidateRow) -> RenderableType:
    if row.mutator == "seed" or not row.diff:
        what = "the seed candidate: no parent to diff against" if row.mutator == "seed" \
            else "no change to show"
        return Text(f"{row.id}: {what} (enter on its row shows the code)", style="dim")
    diff = row.diff if len(row.diff) <= MAX_DIFF_CHARS else row.diff[:MAX_DIFF_CHARS] + "\n…"
    return Syntax(diff, "diff", theme="monokai", background_color="default", word_wrap=False)


class DiffPanel(VerticalScroll):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.border_title = "Diff"
        self._shown: tuple[str, int, str] | None = None
        self._paced = Paced(self, REDRAW_S, self._show)

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static(Text("no candidate yet", style="dim"), id="diff-body", expand=True)

    def show(self, row: CandidateRow | None) -> None:
        if row is not None:
            self._paced(row)

    def _show(self, row: CandidateRow) -> None:
        key = (row.id, len(row.diff), row.status)
        if key == self._shown:
            return
        same = self._shown is not None and self._shown[0] == row.id
        self._shown = key
        parent = row.parent or "—"
        what = f" · {row.description}" if row.description and row.mutator != "seed" else ""
        self.border_subtitle = f"{parent} → {row.id}{what}"
        self.query_one("#diff-body", Static).update(render_diff(row))
        if not same:
            self.scroll_home(animate=False)
