"""The Population panel: one row per candidate, keyed by its id, updated in place."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.message import Message
from textual.widgets import DataTable

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


class SortText(Text):
    """A cell that sorts by a value rather than by its text."""

    def __init__(self, text: str, sort_value: Any, style: str = "", justify: Any = "left") -> None:
        super().__init__(text, style=style, justify=justify, no_wrap=True, overflow="ellipsis")
        self.sort_value = sort_value


def _num(value: float | None) -> float:
    return _MISSING if value is None else value


def cells(row: CandidateRow) -> dict[str, SortText]:
    rejected = row.status == "rejected"
    status_style = ("red" if rejected else "bold green" if row.new_best
                    else "green" if row.status == "accepted" else "cyan")
    dim = "dim" if rejected else ""
    j = {k: just for k, _, just in COLUMNS}
    advice = ",".join(a[:4] for a in row.advice_ids)
    return {
        "id": SortText(row.id, (row.order, row.id), "bold" if row.new_best else ""),
        "island": SortText(str(row.island), row.island, dim, j["island"]),
        "parent": SortText(row.parent or "—", row.parent or "", dim),
        "by": SortText(maker_cell(row), maker_cell(row), dim),
        "status": SortText(status_cell(row), (row.status, row.reason or ""), status_style),
        "time": SortText(fmt_time(row.time_ms, row.interpreter),
                         # faster first when sorted descending
                         -row.time_ms if row.time_ms is not None else _MISSING, dim, j["time"]),
        "speedup": SortText(fmt_x(row.speedup_eager), _num(row.speedup_eager), dim,
                            j["speedup"]),
        "roofline": SortText(fmt_pct(row.roofline_pct), _num(row.roofline_pct), dim,
                             j["roofline"]),
        "advice": SortText(advice or "—", len(row.advice_ids), dim),
    }


class PopulationTable(DataTable):
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
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self.border_title = "Population"
        self._cells: dict[str, dict[str, str]] = {}
        self.sort_column = "id"
        self.sort_reverse = True
        self._announced: str | None = None

    def on_mount(self) -> None:
        for key, label, _ in COLUMNS:
            self.add_column(label, key=key)

    def apply(self, rows: tuple[CandidateRow, ...]) -> None:
        if not rows:
            return
        for row in rows:
            new = cells(row)
            old = self._cells.get(row.id)
            if old is None:
                self.add_row(*new.values(), key=row.id)
            else:
                for key, value in new.items():
                    if old[key] != value.plain:
                        self.update_cell(row.id, key, value, update_width=True)
            self._cells[row.id] = {k: v.plain for k, v in new.items()}
        self._resort()
        self.border_subtitle = f"{len(self._cells)} candidates"

    def sort_by(self, column: str, reverse: bool | None = None) -> None:
        if column not in SORTABLE:
            return
        if reverse is None:
            reverse = not self.sort_reverse if column == self.sort_column else True
        self.sort_column, self.sort_reverse = column, reverse
        self._resort()

    def _resort(self) -> None:
        follow = self.cursor_row <= 0
        key = self.highlighted_id
        self.sort(self.sort_column, key=lambda cell: cell.sort_value, reverse=self.sort_reverse)
        if not follow and key is not None:
            self.move_cursor(row=self.get_row_index(key), scroll=False)
        self.announce()

    @property
    def highlighted_id(self) -> str | None:
        if not self.row_count or self.cursor_row < 0:
            return None
        try:
            return self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
        except Exception:
            return None

    def announce(self) -> None:
        """Tell the app which candidate is under the cursor, when that changed."""
        cid = self.highlighted_id
        if cid != self._announced:
            self._announced = cid
            self.post_message(self.Highlighted(cid))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self.announce()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        if event.row_key.value is not None:
            self.post_message(self.Open(event.row_key.value))

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        event.stop()
        self.sort_by(str(event.column_key.value))
