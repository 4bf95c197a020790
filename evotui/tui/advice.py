"""The Advice panel: what the library offered for the latest mutation, with its status and
measured win rate; ``a``/``v`` act on the highlighted row (see the app)."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import DataTable

from evotui.tui.views import AdviceItem, AdviceView

STATUS_STYLES = {"accepted": "green", "vetoed": "red strike", "authored": "cyan",
                 "proposed": "yellow"}
TEXT_CHARS = 200


def _cells(item: AdviceItem) -> dict[str, Text]:
    win = "—" if item.win_rate is None else f"{item.win_rate:.0%}"
    text = item.text if len(item.text) <= TEXT_CHARS else item.text[: TEXT_CHARS - 1] + "…"
    return {
        "status": Text(item.status, style=STATUS_STYLES.get(item.status, "")),
        "win": Text(f"{win} of {item.shown}" if item.shown else win, justify="right"),
        "text": Text(text, style="strike dim" if item.status == "vetoed" else ""),
        "id": Text(item.id, style="dim"),
    }


class AdvicePanel(DataTable):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cursor_type="row", **kwargs)
        self.border_title = "Advice"
        self.border_subtitle = "none retrieved yet"
        self._items: dict[str, AdviceItem] = {}

    def on_mount(self) -> None:
        for key in ("status", "win", "text", "id"):
            self.add_column(key, key=key)

    def show(self, view: AdviceView) -> None:
        keep = self.highlighted_id
        new_ids = [a.id for a in view.items]
        for gone in [k for k in self._items if k not in new_ids]:
            self.remove_row(gone)
            del self._items[gone]
        for item in view.items:
            cells = _cells(item)
            if item.id not in self._items:
                self.add_row(*cells.values(), key=item.id)
            elif self._items[item.id] != item:
                for key, value in cells.items():
                    self.update_cell(item.id, key, value, update_width=True)
            self._items[item.id] = item
        if keep in self._items:
            self.move_cursor(row=self.get_row_index(keep), scroll=False)
        self.border_subtitle = (f"for {view.candidate_id} · a accept · v veto" if view.items
                                else "none retrieved")

    def item(self, advice_id: str) -> AdviceItem | None:
        return self._items.get(advice_id)

    @property
    def highlighted_id(self) -> str | None:
        if not self.row_count or self.cursor_row < 0:
            return None
        try:
            return self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
        except Exception:
            return None
