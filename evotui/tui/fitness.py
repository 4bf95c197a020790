"""The Fitness panel: every evaluation and the best so far against the evaluation count,
with eager and torch.compile as reference lines, drawn in braille."""

from __future__ import annotations

import logging

from rich.segment import Segment
from rich.style import Style
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget

from evotui.tui.chart import BEST, EVAL, REF_COMPILE, REF_EAGER, REJECTED, plot, y_format
from evotui.tui.pacing import Paced
from evotui.tui.views import FitnessView

REDRAW_S = 0.5  # the chart is redrawn at most twice a second

LAYER_STYLES = {
    REJECTED: Style(color="red"),
    EVAL: Style(color="bright_blue"),
    REF_EAGER: Style(color="yellow"),
    REF_COMPILE: Style(color="magenta"),
    BEST: Style(color="bright_green", bold=True),
}
AXIS = Style(color="bright_black")
log = logging.getLogger(__name__)


def legend(view: FitnessView) -> str:
    what = ("speedup vs eager, higher is better" if view.metric == "speedup"
            else "interpreter wall time, lower is better")
    parts = [what, "[green]━ best[/]", "[blue]⠂ eval[/]", "[red]⠂ rejected[/]"]
    for name, value in view.refs:
        colour = "yellow" if name == "eager" else "magenta"
        parts.append(f"[{colour}]┄ {name} {y_format(view.metric, value)}[/]")
    return " ".join(parts)


class FitnessChart(Widget):
    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.border_title = "Fitness"
        self.view: FitnessView | None = None
        self._strips: list[Strip] = []
        self._built_for: tuple[int, Size] | None = None
        self.show = Paced(self, REDRAW_S, self._show)

    def _show(self, view: FitnessView) -> None:
        self.view = view
        self.border_subtitle = legend(view)
        self._built_for = None
        self.refresh()

    def _build(self) -> None:
        size = self.size
        key = (id(self.view), size)
        if self._built_for == key:
            return
        self._built_for = key
        width, height = size.width, size.height
        base = self.rich_style
        self._strips = []
        try:
            result = plot(self.view, width, height) if self.view is not None else None
        except Exception as e:  # never let a drawing bug take the app down
            log.exception("plotting the fitness failed")
            self._strips = [Strip([Segment(f"cannot plot: {e}"[:width], base + AXIS)])]
            return
        if result is None:
            message = ("waiting for the first accepted evaluation…" if self.view is None
                       or not self.view.points else "nothing accepted to plot yet")
            self._strips = [Strip([Segment(message[:width].ljust(width), base + AXIS)])]
            return
        for label, row in zip(result.y_labels, result.rows, strict=True):
            segments = [Segment(label, base + AXIS)]
            for char, layer in row:
                style = LAYER_STYLES.get(layer) if layer is not None else None
                segments.append(Segment(char, base + style if style else base))
            self._strips.append(Strip(Segment.simplify(segments)))
        gutter = len(result.y_labels[0])
        right = result.x_label_right
        axis = " " * gutter + result.x_label_left
        axis += " " * max(1, width - len(axis) - len(right)) + right
        self._strips.append(Strip([Segment(axis[:width], base + AXIS)]))

    def render_line(self, y: int) -> Strip:
        self._build()
        if y < len(self._strips):
            return self._strips[y].adjust_cell_length(self.size.width, self.rich_style)
        return Strip.blank(self.size.width, self.rich_style)
