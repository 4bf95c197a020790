"""Confirm quitting while a run is in progress (its count kept current while it asks)."""

from __future__ import annotations

from collections.abc import Callable

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label


class ConfirmQuitScreen(ModalScreen[bool]):
    BINDINGS = [
        Binding("y", "answer(True)", "Stop and quit"),
        Binding("n,escape", "answer(False)", "Keep running"),
    ]

    REFRESH_S = 0.5

    def __init__(self, message: str | Callable[[], str]) -> None:
        super().__init__()
        self._message = message

    @property
    def message(self) -> str:
        return self._message() if callable(self._message) else self._message

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="confirm") as dialog:
            dialog.border_title = "Quit?"
            yield Label(self.message, id="question")
            with Horizontal(classes="buttons"):
                yield Button("Stop and quit (y)", id="yes", variant="error")
                yield Button("Keep running (n)", id="no", variant="primary")

    def on_mount(self) -> None:
        self.query_one("#yes", Button).focus()
        if callable(self._message):
            self.set_interval(self.REFRESH_S, self._refresh_question)

    def _refresh_question(self) -> None:
        self.query_one("#question", Label).update(self.message)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "yes")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)
