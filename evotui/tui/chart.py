"""A braille canvas and the fitness plot drawn on it (plain Python, no Textual).

Each terminal cell holds 2×4 dots (Unicode braille, U+2800–U+28FF). Drawing happens on
numbered layers; a cell takes the colour of the highest layer that has a dot in it, and the
dots of every layer.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from evotui.tui.views import FitnessView

# bit of the dot at (column 0..1, row 0..3) inside one braille cell
_BITS = ((0x01, 0x08), (0x02, 0x10), (0x04, 0x20), (0x40, 0x80))
_BLANK = 0x2800

# layers, lowest first
REJECTED, EVAL, REF_EAGER, REF_COMPILE, BEST = range(5)
LAYER_NAMES = ("rejected", "eval", "eager", "compile", "best")


class BrailleCanvas:
    def __init__(self, width: int, height: int, layers: int = len(LAYER_NAMES)) -> None:
        self.width, self.height = max(1, width), max(1, height)  # in cells
        self.dots_x, self.dots_y = self.width * 2, self.height * 4
        self._layers = [bytearray(self.width * self.height) for _ in range(layers)]

    def dot(self, layer: int, x: int, y: int) -> None:
        """Set the dot at (x, y) in dots, y = 0 at the top; outside the canvas is ignored."""
        if 0 <= x < self.dots_x and 0 <= y < self.dots_y:
            cx, bx = divmod(x, 2)
            cy, by = divmod(y, 4)
            self._layers[layer][cy * self.width + cx] |= _BITS[by][bx]

    def hline(self, layer: int, y: int, dashed: bool = False) -> None:
        for x in range(self.dots_x):
            if not dashed or x % 4 < 2:
                self.dot(layer, x, y)

    def line(self, layer: int, x0: int, y0: int, x1: int, y1: int) -> None:
        steps = max(abs(x1 - x0), abs(y1 - y0), 1)
        for i in range(steps + 1):
            self.dot(layer, round(x0 + (x1 - x0) * i / steps), round(y0 + (y1 - y0) * i / steps))

    def cells(self) -> list[list[tuple[str, int | None]]]:
        """Rows of (character, top layer or None for an empty cell)."""
        out = []
        for cy in range(self.height):
            row = []
            for cx in range(self.width):
                i = cy * self.width + cx
                bits, top = 0, None
                for n, layer in enumerate(self._layers):
                    if layer[i]:
                        bits |= layer[i]
                        top = n
                row.append((chr(_BLANK + bits), top))
            out.append(row)
        return out


@dataclass(frozen=True)
class Plot:
    """A rendered fitness plot: rows of (text, layer) runs plus the axis labels."""

    rows: list[list[tuple[str, int | None]]]
    y_labels: list[str]  # one per row ("" where none)
    x_label_left: str
    x_label_right: str
    log: bool = False


def y_format(metric: str, value: float) -> str:
    if metric == "speedup":
        return f"{value:.2f}×"
    return f"{value:.0f}ms" if value >= 10 else f"{value:.1f}ms"


LOG_ABOVE = 4.0  # a log scale when the largest value is this many times the smallest


def _range(values: list[float], log: bool) -> tuple[float, float]:
    lo, hi = min(values), max(values)
    if math.isclose(lo, hi):
        pad = abs(lo) * 0.1 or 1.0
        lo, hi = lo - pad, hi + pad
    else:
        pad = (hi - lo) * 0.08
        lo, hi = lo - pad, hi + pad
    return (lo, hi) if log else (max(lo, 0.0) if min(values) >= 0 else lo, hi)


def plot(view: FitnessView, width: int, height: int) -> Plot | None:
    """Lay ``view`` out on ``width``×``height`` cells (labels included); None when there is
    nothing to plot or no room."""
    ys = [y for _, y in view.points if y is not None]
    refs = [v for _, v in view.refs]
    if not ys or height < 2:
        return None
    values = ys + refs
    log = min(values) > 0 and max(values) / min(values) > LOG_ABOVE
    f = math.log if log else float
    lo, hi = _range([f(v) for v in values], log)
    g = math.exp if log else float
    labels = [y_format(view.metric, g(hi)), y_format(view.metric, g((lo + hi) / 2)),
              y_format(view.metric, g(lo))]
    gutter = max(len(x) for x in labels) + 1
    plot_w, plot_h = width - gutter, height - 1
    if plot_w < 4 or plot_h < 1:
        return None
    canvas = BrailleCanvas(plot_w, plot_h)
    n = max(len(view.points), 2)

    def px(x: int) -> int:
        return round(x * (canvas.dots_x - 1) / (n - 1))

    def py(y: float) -> int:
        return round((hi - f(y)) / (hi - lo) * (canvas.dots_y - 1))

    for name, value in view.refs:
        canvas.hline(REF_EAGER if name == "eager" else REF_COMPILE, py(value), dashed=True)
    bottom = canvas.dots_y - 1
    # thousands of points land on a few hundred dots: draw each dot once
    marks = {(REJECTED, px(x), bottom - 1) if y is None else (EVAL, px(x), py(y))
             for x, y in view.points}
    for layer, xx, yy in marks:  # 2×2 dots: visible without hiding the lines
        for dx in (0, 1):
            for dy in (0, 1):
                canvas.dot(layer, xx + dx, yy + dy)
    best = list(view.best)
    ends = [x for x, _ in best[1:]] + [len(view.points) - 1]
    for (x0, y0), x1 in zip(best, ends, strict=True):
        canvas.line(BEST, px(x0), py(y0), px(max(x1, x0)), py(y0))  # a step: flat until the next
    y_labels = [""] * plot_h
    y_labels[0] = labels[0]
    y_labels[-1] = labels[2]
    if plot_h >= 5:
        y_labels[plot_h // 2] = labels[1]
    right = f"{len(view.points) - 1} evaluations" + (" (log scale)" if log else "")
    return Plot(canvas.cells(), [lab.rjust(gutter - 1) + " " for lab in y_labels], "0", right,
                log)
