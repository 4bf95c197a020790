"""The Advice panel: what the library offered for the latest mutation, with its status and
measured win rate; ``a``/``v`` act on the highlighted row while this panel has the focus
(pressed elsewhere, they move the focus here first: see the app)."""

from __future__ import annotations

from typing import Any

from evotui.tui.pacing import Paced
from evotui.tui.table import Cell, KeyedTable
from evotui.tui.views import AdviceItem, AdviceView

REDRAW_S = 0.5
STATUS_STYLES = {"accepted": "green", "vetoed": "red strike", "authored": "cyan",
                 "proposed": "yellow"}
TEXT_CHARS = 200


COLUMNS = (("status", "left"), ("win", "right"), ("text", "left"), ("id", "left"))


def _cells(item: AdviceItem) -> tuple[Cell, ...]:
    win = "—" if item.win_rate is None else f"{item.win_rate:.0%}"
    text = item.text if len(item.text) <= TEXT_CHARS else item.text[: TEXT_CHARS - 1] + "…"
    return (
        (item.status, STATUS_STYLES.get(item.status, "")),
        (f"{win} of {item.shown}" if item.shown else win, ""),
        (text, "strike dim" if item.status == "vetoed" else ""),
        (item.id, "dim"),
    )


class AdvicePanel(KeyedTable):
    """Rows keyed by slot ("0".."4"): a new retrieval rewrites the cells in place;
    ``highlighted_id`` maps the cursor back to the advice id."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.border_title = "Advice"
        self.border_subtitle = "none retrieved yet"
        self._slots: list[AdviceItem] = []
        self.show = Paced(self, REDRAW_S, self._show)
        for key, justify in COLUMNS:
            self.add_column(key, key=key, justify=justify)

    def _show(self, view: AdviceView) -> None:
        items = list(view.items)
        while len(self._slots) > len(items):
            self.remove_row(str(len(self._slots) - 1))
            self._slots.pop()
        for n, item in enumerate(items):
            cells = _cells(item)
            if n >= len(self._slots):
                self.add_row(*cells, key=str(n))
                self._slots.append(item)
            elif self._slots[n] != item:
                for (key, _), value in zip(COLUMNS, cells, strict=True):
                    self.update_cell(str(n), key, value)
                self._slots[n] = item
        self.refresh_rows()
        self.border_subtitle = (f"for {view.candidate_id} · here: a accept · v veto" if items
                                else view.note or "none retrieved")

    def item(self, advice_id: str) -> AdviceItem | None:
        return next((a for a in self._slots if a.id == advice_id), None)

    @property
    def highlighted_id(self) -> str | None:
        row = self.cursor_row
        if not self._slots or not 0 <= row < len(self._slots):
            return None
        return self._slots[row].id
