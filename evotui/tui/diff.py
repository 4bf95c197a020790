"""The Diff panel: parent → child as a unified diff, highlighted by Pygments (via rich)."""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.syntax import Syntax
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from evotui.tui.pacing import Paced
from evotui.tui.views import CandidateRow

REDRAW_S = 0.25  # highlighting a diff costs; while candidates stream in, a few a second
MAX_DIFF_CHARS = 60_000


def changed_lines(diff: str, context: int = 0) -> str:
    """The diff without its file header (the panel's subtitle names parent and child) and,
    where room is short, with ``context`` lines of context at most around each change:
    what a small panel shows is the + and - lines."""
    lines = [x for x in diff.splitlines() if not x.startswith(("--- ", "+++ "))]
    changed = {i for i, x in enumerate(lines) if x[:1] in "+-"}
    keep = {j for i in changed for j in range(i - context, i + context + 1)}
    out: list[str] = []
    for i, x in enumerate(lines):
        if x.startswith("@@"):
            if out and out[-1] != "…":
                out.append("…")
        elif i in keep:
            out.append(x)
    return "\n".join(out).strip("…\n")


def render_diff(row: CandidateRow, compact: bool = False) -> RenderableType:
    if row.mutator == "seed" or not row.diff:
        what = "the seed candidate: no parent to diff against" if row.mutator == "seed" \
            else "no change to show"
        return Text(f"{row.id}: {what} (enter on its row shows the code)", style="dim")
    diff = row.diff if len(row.diff) <= MAX_DIFF_CHARS else row.diff[:MAX_DIFF_CHARS] + "\n…"
    body = Syntax(changed_lines(diff) if compact else
                  "\n".join(x for x in diff.splitlines() if not x.startswith(("--- ", "+++ "))),
                  "diff", theme="monokai", background_color="default", word_wrap=False)
    if not compact:
        return body
    # no bottom border to carry the subtitle: parent → child on the first line
    what = f": {row.description}" if row.description else ""
    return Group(Text(f"{row.parent or '—'} → {row.id}{what}", style="dim", no_wrap=True,
                      overflow="ellipsis"), body)


class DiffPanel(VerticalScroll):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.border_title = "Diff"
        self._shown: tuple[str, int, str] | None = None
        self._row: CandidateRow | None = None
        self.compact = False  # only the changed lines (a narrow terminal)
        self._paced = Paced(self, REDRAW_S, self._show)

    def set_compact(self, compact: bool) -> None:
        if compact != self.compact:
            self.compact = compact
            self._shown = None
            if self._row is not None:
                self._show(self._row)

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
        self._shown, self._row = key, row
        parent = row.parent or "—"
        what = f" · {row.description}" if row.description and row.mutator != "seed" else ""
        self.border_subtitle = f"{parent} → {row.id}{what}"
        self.query_one("#diff-body", Static).update(render_diff(row, self.compact))
        if not same:
            self.scroll_home(animate=False)
