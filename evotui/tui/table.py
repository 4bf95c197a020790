"""A keyed table for thousands of rows that change several times a second.

Textual's ``DataTable`` keys every render cache on a table-wide update counter (and the
cursor position), so each ``update_cell``/``add_row``/``sort`` re-renders every visible
cell: about 80 ms per frame for a 200×60 table, every frame while a run streams in. This
table keeps one rendered line per row, keyed by the row's own version, the column widths and
whether the cursor is on it: a frame re-renders only the rows that changed and re-crops the
others. Same vocabulary as ``DataTable``: columns and rows have keys, ``add_row(..., key=)``,
``update_cell(row, column, value)``, ``sort(column, key=, reverse=)``, a row cursor and the
messages ``RowHighlighted``, ``RowSelected``, ``HeaderSelected``.

The header is the first line and stays put; rows scroll under it. Cells are plain
``(text, style)`` pairs of strings, with optional sort values beside them: thousands of rows
then hold no objects the garbage collector has to walk (Rich ``Text`` cells would add three
tracked objects each, and every full collection walks them all).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

PAD = 1  # spaces either side of a cell
STRIP_CACHE = 128  # rendered rows kept (a screenful or two)
Cell = tuple[str, str]  # (text, style)


@dataclass
class Column:
    key: str
    label: str
    justify: str = "left"
    width: int = 0


class KeyedTable(ScrollView, can_focus=True):
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "keyed-table--header", "keyed-table--cursor", "keyed-table--sorted"}
    DEFAULT_CSS = """
    KeyedTable {
        background: $surface;
        color: $foreground;
        & > .keyed-table--header { text-style: bold; background: $panel; color: $foreground; }
        & > .keyed-table--sorted { text-style: bold underline; }
        & > .keyed-table--cursor {
            background: $block-cursor-blurred-background;
            color: $block-cursor-blurred-foreground;
        }
        &:focus > .keyed-table--cursor {
            background: $block-cursor-background;
            color: $block-cursor-foreground;
            text-style: $block-cursor-text-style;
        }
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "edge(0)", "First", show=False),
        Binding("end", "edge(1)", "Last", show=False),
        Binding("enter", "select", "Details", show=False),
    ]

    class RowHighlighted(Message):
        def __init__(self, table: KeyedTable, row_key: str | None) -> None:
            self.table, self.row_key = table, row_key
            super().__init__()

    class RowSelected(Message):
        def __init__(self, table: KeyedTable, row_key: str) -> None:
            self.table, self.row_key = table, row_key
            super().__init__()

    class HeaderSelected(Message):
        def __init__(self, table: KeyedTable, column_key: str) -> None:
            self.table, self.column_key = table, column_key
            super().__init__()

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.columns: list[Column] = []
        self._cells: dict[str, tuple[Cell, ...]] = {}
        self._col_index: dict[str, int] = {}
        self._version: dict[str, int] = {}
        self._order: list[str] = []
        self._index: dict[str, int] = {}
        self._sort_values: dict[str, Any] = {}  # row -> its value in the sorted column
        self._row_sort: dict[str, tuple[Any, ...]] = {}  # row -> sort value per column
        self._sort: tuple[str, bool] | None = None
        self._strips: OrderedDict[str, tuple[tuple, Strip]] = OrderedDict()
        self._widths_version = 0
        self._header: tuple[tuple, Strip] | None = None
        self.cursor_row = 0
        self._announced: str | None = None

    # ---- content -----------------------------------------------------------------------------
    def add_column(self, label: str, *, key: str, justify: str = "left") -> None:
        self._col_index[key] = len(self.columns)
        self.columns.append(Column(key, label, justify, cell_len(label)))
        self._widths_changed()

    @property
    def row_count(self) -> int:
        return len(self._order)

    def __contains__(self, row_key: object) -> bool:
        return row_key in self._cells

    def add_row(self, *cells: Cell, key: str, sort_values: tuple[Any, ...] | None = None) -> str:
        """Add a row (cells in column order; ``sort_values`` likewise, else the texts)."""
        if key in self._cells:
            raise KeyError(f"row {key!r} exists")
        if len(cells) != len(self.columns):
            raise ValueError(f"{len(cells)} cells for {len(self.columns)} columns")
        self._cells[key] = tuple(cells)
        self._row_sort[key] = sort_values or tuple(c[0] for c in cells)
        self._version[key] = 0
        self._index[key] = len(self._order)
        self._order.append(key)
        self._measure(key)
        self._sort_value(key)
        self._dirty = True
        return key

    def remove_row(self, row_key: str) -> None:
        del self._cells[row_key], self._row_sort[row_key], self._version[row_key]
        self._sort_values.pop(row_key, None)
        self._strips.pop(row_key, None)
        self._order.remove(row_key)
        self._index = {k: i for i, k in enumerate(self._order)}
        self._dirty = True

    def update_cell(self, row_key: str, column_key: str, value: Cell,
                    sort_value: Any = None) -> None:
        i = self._col_index[column_key]
        row = self._cells[row_key]
        self._cells[row_key] = row[:i] + (value,) + row[i + 1:]
        sorts = self._row_sort[row_key]
        self._row_sort[row_key] = sorts[:i] + (value[0] if sort_value is None else sort_value,) \
            + sorts[i + 1:]
        self._version[row_key] += 1
        self._measure(row_key, column_key)
        if self._sort is not None and self._sort[0] == column_key:
            self._sort_value(row_key)
        self._dirty = True

    def get_cell(self, row_key: str, column_key: str) -> Cell:
        return self._cells[row_key][self._col_index[column_key]]

    def get_row_index(self, row_key: str) -> int:
        return self._index[row_key]

    def row_key_at(self, index: int) -> str | None:
        return self._order[index] if 0 <= index < len(self._order) else None

    @property
    def cursor_key(self) -> str | None:
        return self.row_key_at(self.cursor_row)

    def sort(self, column_key: str, *, reverse: bool = False) -> None:
        """Order the rows by one column's sort values (ties: the order rows came in)."""
        self._sort = (column_key, reverse)
        for row_key in self._cells:
            self._sort_value(row_key)
        self._header = None
        self._dirty = True
        self.refresh_rows()

    def _sort_value(self, row_key: str) -> None:
        if self._sort is not None:
            self._sort_values[row_key] = self._row_sort[row_key][self._col_index[self._sort[0]]]

    def _measure(self, row_key: str, column_key: str | None = None) -> None:
        grew = False
        for col in self.columns:
            if column_key is not None and col.key != column_key:
                continue
            width = cell_len(self._cells[row_key][self._col_index[col.key]][0])
            if width > col.width:
                col.width, grew = width, True
        if grew:
            self._widths_changed()

    def _widths_changed(self) -> None:
        self._widths_version += 1
        self._header = None

    # ---- the view ----------------------------------------------------------------------------
    _dirty = False

    def refresh_rows(self, follow: bool = False) -> None:
        """Apply pending changes: re-sort, keep the cursor on its row (or on the first row
        when ``follow``), resize, redraw. Call once after a batch of adds and updates."""
        if not self._dirty:
            return
        self._dirty = False
        keep = self.cursor_key
        if self._sort is not None:
            _, reverse = self._sort
            values = self._sort_values
            self._order.sort(key=lambda k: values[k], reverse=reverse)
            self._index = {k: i for i, k in enumerate(self._order)}
        if not follow and keep is not None:
            self.cursor_row = self._index[keep]
        self.cursor_row = max(0, min(self.cursor_row, len(self._order) - 1))
        width = sum(c.width + 2 * PAD for c in self.columns)
        self.virtual_size = Size(width, len(self._order) + 1)
        self.refresh()
        self._announce()

    def _announce(self) -> None:
        key = self.cursor_key
        if key != self._announced:
            self._announced = key
            self.post_message(self.RowHighlighted(self, key))

    def _row_strip(self, row_key: str, cursor: bool) -> Strip:
        focused = self.has_focus
        cache_key = (self._version[row_key], self._widths_version, cursor, cursor and focused)
        hit = self._strips.get(row_key)
        if hit is not None and hit[0] == cache_key:
            self._strips.move_to_end(row_key)
            return hit[1]
        base = self.rich_style
        if cursor:
            base = base + self.get_component_rich_style("keyed-table--cursor")
        line = Text(style=base, no_wrap=True, end="")
        for col, (text, cell_style) in zip(self.columns, self._cells[row_key], strict=True):
            cell = Text(text, style=cell_style)
            cell.truncate(col.width, overflow="ellipsis")
            pad = col.width - cell.cell_len
            line.append(" " * PAD)
            if col.justify == "right":
                line.append(" " * pad)
                line.append_text(cell)
            else:
                line.append_text(cell)
                line.append(" " * pad)
            line.append(" " * PAD)
        strip = Strip(list(line.render(self.app.console)), line.cell_len)
        if cursor:  # the cursor's style over every cell's own colours
            strip = strip.apply_style(self.get_component_rich_style("keyed-table--cursor"))
        self._strips[row_key] = (cache_key, strip)
        if len(self._strips) > STRIP_CACHE:
            self._strips.popitem(last=False)
        return strip

    def _header_strip(self) -> Strip:
        key = (self._widths_version, self._sort)
        if self._header is not None and self._header[0] == key:
            return self._header[1]
        style = self.rich_style + self.get_component_rich_style("keyed-table--header")
        sorted_style = self.get_component_rich_style("keyed-table--sorted")
        line = Text(style=style, no_wrap=True, end="")
        for col in self.columns:
            label = col.label
            if self._sort is not None and self._sort[0] == col.key:
                label += " ▼" if self._sort[1] else " ▲"
            label = label[: col.width + PAD]
            pad = max(0, col.width - cell_len(label))
            is_sorted = self._sort is not None and self._sort[0] == col.key
            cell = Text(label, style=sorted_style if is_sorted else "")
            line.append(" " * PAD)
            if col.justify == "right":
                line.append(" " * pad)
                line.append_text(cell)
            else:
                line.append_text(cell)
                line.append(" " * pad)
            line.append(" " * max(0, PAD - max(0, cell_len(label) - col.width)))
        strip = Strip(list(line.render(self.app.console)), line.cell_len)
        self._header = (key, strip)
        return strip

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.size.width
        style = self.rich_style
        if y == 0:
            strip = self._header_strip()
            style = style + self.get_component_rich_style("keyed-table--header")
        else:
            index = scroll_y + y - 1
            if index >= len(self._order):
                return Strip.blank(width, style)
            strip = self._row_strip(self._order[index], index == self.cursor_row)
        return strip.crop_extend(scroll_x, scroll_x + width, style)

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    # ---- the cursor --------------------------------------------------------------------------
    def move_cursor(self, row: int, scroll: bool = True) -> None:
        if not self._order:
            return
        row = max(0, min(row, len(self._order) - 1))
        if row != self.cursor_row:
            self.cursor_row = row
            self.refresh()
        if scroll:
            self._scroll_to_cursor()
        self._announce()

    def _scroll_to_cursor(self) -> None:
        visible = max(1, self.size.height - 1)
        top = self.scroll_offset.y
        if self.cursor_row < top:
            self.scroll_to(y=self.cursor_row, animate=False)
        elif self.cursor_row >= top + visible:
            self.scroll_to(y=self.cursor_row - visible + 1, animate=False)

    def action_cursor(self, delta: int) -> None:
        self.move_cursor(self.cursor_row + delta)

    def action_page(self, direction: int) -> None:
        self.move_cursor(self.cursor_row + direction * max(1, self.size.height - 2))

    def action_edge(self, end: int) -> None:
        self.move_cursor(len(self._order) - 1 if end else 0)

    def action_select(self) -> None:
        key = self.cursor_key
        if key is not None:
            self.post_message(self.RowSelected(self, key))

    def on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None:
            return
        scroll_x, scroll_y = self.scroll_offset
        if offset.y == 0:
            x = offset.x + scroll_x
            for col in self.columns:
                x -= col.width + 2 * PAD
                if x < 0:
                    self.post_message(self.HeaderSelected(self, col.key))
                    return
            return
        index = scroll_y + offset.y - 1
        if 0 <= index < len(self._order):
            again = index == self.cursor_row
            self.move_cursor(index, scroll=False)
            if again or event.chain >= 2:
                self.action_select()
