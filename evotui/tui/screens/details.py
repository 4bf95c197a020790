"""One candidate in full: lineage, metrics, rejection reason and code."""

from __future__ import annotations

from rich.console import Group
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.screen import ModalScreen
from textual.widgets import Static

from evotui.tui.controller import CandidateInfo
from evotui.tui.views import CandidateRow, fmt_pct, fmt_time, fmt_x, noise_note, status_cell


def summary(row: CandidateRow | None, info: CandidateInfo | None) -> Table:
    table = Table.grid(padding=(0, 2))
    table.add_column(style="dim", no_wrap=True)
    table.add_column()
    if row is not None:
        table.add_row("status", Text(status_cell(row), style="red" if row.status == "rejected"
                                     else "green"))
        if row.reason and row.status == "rejected":
            table.add_row("reason", f"{row.reason}: {row.message}")
        if noise_note(row):
            table.add_row("not the best", noise_note(row))
        if row.parent:
            via = (f" (through its copy {row.parent_copy} on island {row.island}, placed "
                   "there by island seeding or migration)" if row.parent_copy else "")
            table.add_row("parent", row.parent + via)
        table.add_row("made by", f"{row.mutator}" + (f" ({row.model})" if row.model else ""))
        if row.description:
            table.add_row("change", row.description)
        table.add_row("island / generation", f"{row.island} / {row.generation}")
        r = row.metrics
        table.add_row("time", fmt_time(r.time_ms, r.interpreter)
                      + (" (CPU interpreter wall time: not kernel speed)" if r.interpreter else "")
                      + (f" ± {r.spread_pct:.2f} %" if r.spread_pct else ""))
        if not r.interpreter:
            table.add_row("speedup", f"{fmt_x(r.speedup_eager)} vs eager, "
                          f"{fmt_x(r.speedup_compile)} vs torch.compile")
            table.add_row("roofline", fmt_pct(r.roofline_pct))
        if row.advice_ids:
            table.add_row("advice shown", ", ".join(row.advice_ids))
        table.add_row("evaluation took", f"{r.wall_s:.1f} s")
    if info is not None:
        m = info.metrics
        if info.lineage:
            table.add_row("lineage", " → ".join(info.lineage))
        if m.copy_pct is not None:
            table.add_row("same-size copy", f"{fmt_pct(m.copy_pct)} of a plain copy of the "
                          "same bytes")
        if m.timing_method:
            method = m.timing_method
            table.add_row("timing", method + (" (a clear loser: a few samples)"
                                              if method == "coarse" else ""))
        if info.message and (row is None or row.status != "rejected"):
            table.add_row("verdict", info.message)
    return table


class CandidateScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape,q", "close", "Close"),
        Binding("p", "pin", "Pin as next parent"),
    ]

    class Pin(Message):
        def __init__(self, candidate_id: str) -> None:
            self.candidate_id = candidate_id
            super().__init__()

    def __init__(self, cid: str, row: CandidateRow | None, info: CandidateInfo | None) -> None:
        super().__init__()
        self.cid, self.row, self.info = cid, row, info

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="details") as dialog:
            dialog.border_title = f"Candidate {self.cid}"
            dialog.border_subtitle = "escape close · p pin as the next parent"
            with VerticalScroll(id="details-body"):
                yield Static(self._body())

    def _body(self) -> Group:
        parts: list = [summary(self.row, self.info), Text("")]
        if self.info is not None:
            parts.append(Syntax(self.info.source, "python", theme="monokai", line_numbers=True,
                                background_color="default", word_wrap=False))
        else:
            parts.append(Text("The full code appears once the candidate is evaluated; the Diff "
                              "panel shows the change.", style="dim"))
            if self.row is not None and self.row.diff:
                parts.append(Syntax(self.row.diff, "diff", theme="monokai",
                                    background_color="default"))
        return Group(*parts)

    def action_close(self) -> None:
        self.dismiss(None)

    def action_pin(self) -> None:
        self.app.post_message(self.Pin(self.cid))
        self.dismiss(None)
