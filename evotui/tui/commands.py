"""Everything the keys do, in the command palette (ctrl+p)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Protocol

from textual.command import DiscoveryHit, Hit, Hits, Provider

from evotui.tui.population import COLUMNS


class PaletteActions(Protocol):
    """The app's actions the palette offers (``EvotuiApp`` has them all)."""

    def action_toggle_pause(self) -> object: ...
    def action_new_advice(self) -> object: ...
    def action_accept(self) -> object: ...
    def action_veto(self) -> object: ...
    def action_hint(self) -> object: ...
    def action_export(self) -> object: ...
    def action_details(self) -> object: ...
    def action_pin(self) -> object: ...
    def action_quit(self) -> object: ...
    def action_sort(self, column: str) -> object: ...


def commands(app: PaletteActions) -> list[tuple[str, str, Callable[[], object]]]:
    out: list[tuple[str, str, Callable[[], object]]] = [
        ("Pause / resume the run", "space: in-flight evaluations finish first",
         app.action_toggle_pause),
        ("New advice…", "n: write advice into the library", app.action_new_advice),
        ("Accept the highlighted advice", "a: keep offering it, boosted", app.action_accept),
        ("Veto the highlighted advice", "v: never offer it again", app.action_veto),
        ("Hint for the next mutations…", "h: a line added to the next prompts",
         app.action_hint),
        ("Export the best kernel", "e: write best.py to the run directory", app.action_export),
        ("Candidate details", "enter: full code, metrics, rejection reason",
         app.action_details),
        ("Pin the highlighted candidate as the next parent", "the next mutation starts from it",
         app.action_pin),
        ("Quit", "q: stop the run, write the report and quit", app.action_quit),
    ]
    for key, label, _ in COLUMNS:
        out.append((f"Sort population by {label}", "again: reverse the order",
                    partial(app.action_sort, key)))
    return out


class EvotuiCommands(Provider):
    async def discover(self) -> Hits:
        for title, help_text, callback in commands(self.app):  # type: ignore[arg-type]
            yield DiscoveryHit(title, callback, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in commands(self.app):  # type: ignore[arg-type]
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, matcher.highlight(title), callback, help=help_text)
