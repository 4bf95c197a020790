"""A hint for the next mutation prompts (``h``)."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label


class HintScreen(ModalScreen[tuple[str, int | None] | None]):
    """Returns (text, uses): ``uses`` prompts, None until cleared; an empty text clears every
    hint."""

    BINDINGS = [
        Binding("ctrl+s", "save", "Send", priority=True),
        Binding("escape", "cancel", "Cancel"),
    ]

    def __init__(self, note: str = "") -> None:
        super().__init__()
        self.note = note

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog", classes="form") as dialog:
            dialog.border_title = "Hint for the next mutations"
            dialog.border_subtitle = "enter/ctrl+s send · escape cancel"
            yield Label("Hint (empty: clear the hints given so far):")
            yield Input(id="hint-text", placeholder="try a two-pass reduction with BLOCK 1024")
            yield Label("For how many prompts (empty: until cleared):")
            yield Input(id="hint-uses", placeholder="5", type="integer")
            if self.note:
                yield Label(self.note, classes="note")
            yield Label("", id="error", classes="error")

    def on_mount(self) -> None:
        self.query_one("#hint-text", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_save()

    def action_save(self) -> None:
        uses_text = self.query_one("#hint-uses", Input).value.strip()
        uses: int | None = None
        if uses_text:
            try:
                uses = int(uses_text)
            except ValueError:
                uses = 0
            if uses <= 0:
                self.query_one("#error", Label).update("A positive number of prompts, or empty.")
                return
        self.dismiss((self.query_one("#hint-text", Input).value.strip(), uses))

    def action_cancel(self) -> None:
        self.dismiss(None)
