"""The Population panel: one row per candidate, keyed by its id, updated in place."""

from __future__ import annotations

from typing import Any

from textual.message import Message

from evotui.tui.table import Cell, KeyedTable
from evotui.tui.views import CandidateRow, fmt_pct, fmt_time, fmt_x, maker_cell, status_cell

# (key, label, justify)
COLUMNS = (
    ("id", "id", "left"),
    ("island", "isl", "right"),
    ("parent", "parent", "left"),
    ("by", "mutator/model", "left"),
    ("status", "status", "left"),
    ("time", "time", "right"),
    ("speedup", "speedup", "right"),
    ("roofline", "roof", "right"),
    ("advice", "advice", "left"),
)
SORTABLE = tuple(c[0] for c in COLUMNS)
_MISSING = float("-inf")


def _num(value: float | None) -> float:
    return _MISSING if value is None else value


def cells(row: CandidateRow) -> tuple[tuple[Cell, ...], tuple[Any, ...]]:
    """The row's cells ((text, style) in column order) and their sort values."""
    rejected = row.status == "rejected"
    status_style = ("red" if rejected else "bold green" if row.new_best
                    else "green" if row.status == "accepted" else "cyan")
    dim = "dim" if rejected else ""
    maker, m = maker_cell(row), row.metrics
    texts: tuple[Cell, ...] = (
        (row.id, "bold" if row.new_best else ""),
        (str(row.island), dim),
        (row.parent or "—", dim),
        (maker, dim),
        (status_cell(row), status_style),
        (fmt_time(m.time_ms, m.interpreter), dim),
        (fmt_x(m.speedup_eager), dim),
        (fmt_pct(m.roofline_pct), dim),
        (",".join(a[:4] for a in row.advice_ids) or "—", dim),
    )
    sorts = (
        row.order, row.island, row.parent or "", maker, (row.status, row.reason or ""),
        -m.time_ms if m.time_ms is not None else _MISSING,  # descending: fastest first
        _num(m.speedup_eager), _num(m.roofline_pct), len(row.advice_ids),
    )
    return texts, sorts


class PopulationTable(KeyedTable):
    """Rows keyed by candidate id; ``apply`` adds new ones and updates changed cells only.

    Sorted by a column (click its header, or the palette); newest first by default. While
    the cursor is on the first row it follows the newest candidate; elsewhere it stays on
    the candidate it is on."""

    class Highlighted(Message):
        def __init__(self, candidate_id: str | None) -> None:
            self.candidate_id = candidate_id
            super().__init__()

    class Open(Message):
        """Enter on a row: show that candidate's details."""

        def __init__(self, candidate_id: str) -> None:
            self.candidate_id = candidate_id
            super().__init__()

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.border_title = "Population"
        self._shown: dict[str, tuple[Cell, ...]] = {}
        self.sort_column = "id"
        self.sort_reverse = True
        for key, label, justify in COLUMNS:
            self.add_column(label, key=key, justify=justify)
        self.sort(self.sort_column, reverse=self.sort_reverse)

    def apply(self, rows: tuple[CandidateRow, ...]) -> None:
        if not rows:
            return
        follow = self.cursor_row <= 0
        for row in rows:
            texts, sorts = cells(row)
            old = self._shown.get(row.id)
            if old is None:
                self.add_row(*texts, key=row.id, sort_values=sorts)
            elif old != texts:
                for (key, _, _), value, was, sort_value in zip(COLUMNS, texts, old, sorts,
                                                               strict=True):
                    if value != was:
                        self.update_cell(row.id, key, value, sort_value)
            self._shown[row.id] = texts
        self.refresh_rows(follow=follow)
        self.border_subtitle = f"{self.row_count} candidates"

    def sort_by(self, column: str, reverse: bool | None = None) -> None:
        if column not in SORTABLE:
            return
        if reverse is None:
            reverse = not self.sort_reverse if column == self.sort_column else True
        self.sort_column, self.sort_reverse = column, reverse
        self.sort(column, reverse=reverse)

    @property
    def highlighted_id(self) -> str | None:
        return self.cursor_key

    def on_keyed_table_row_highlighted(self, event: KeyedTable.RowHighlighted) -> None:
        event.stop()
        self.post_message(self.Highlighted(event.row_key))

    def on_keyed_table_row_selected(self, event: KeyedTable.RowSelected) -> None:
        event.stop()
        self.post_message(self.Open(event.row_key))

    def on_keyed_table_header_selected(self, event: KeyedTable.HeaderSelected) -> None:
        event.stop()
        self.sort_by(event.column_key)

