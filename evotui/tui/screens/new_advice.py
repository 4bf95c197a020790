"""The "New advice" form: one sentence for the advice library, with its context.

The text field has the focus when the form opens; ``ctrl+s`` saves, ``escape`` cancels.
Conditions are ``key=value`` pairs separated by ``;`` (values with commas become lists,
whole numbers become numbers), or a JSON object: ``dtypes=bf16,fp16; min_size=4096``.
"""

from __future__ import annotations

import json
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Label, TextArea

TITLE = "New advice"


class ConditionsError(ValueError):
    pass


def _value(text: str) -> Any:
    text = text.strip()
    if "," in text:
        return [_value(v) for v in text.split(",") if v.strip()]
    try:
        return int(text)
    except ValueError:
        return text


def parse_conditions(text: str) -> dict[str, Any]:
    text = text.strip()
    if not text:
        return {}
    if text.startswith("{"):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise ConditionsError(f"conditions: not valid JSON ({e.msg})") from None
        if not isinstance(data, dict):
            raise ConditionsError("conditions: a JSON object is needed")
        return data
    out: dict[str, Any] = {}
    for part in text.split(";"):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise ConditionsError(f"conditions: {part.strip()!r} is not key=value")
        out[key.strip()] = _value(value)
    return out


class NewAdviceScreen(ModalScreen[dict[str, Any] | None]):
    BINDINGS = [
        Binding("ctrl+s", "save", "Save", priority=True),
        Binding("escape", "cancel", "Cancel"),
    ]

    def __init__(self, defaults: dict[str, str] | None = None) -> None:
        super().__init__()
        self.defaults = defaults or {}

    def compose(self) -> ComposeResult:
        d = self.defaults
        with Vertical(id="dialog", classes="form") as dialog:
            dialog.border_title = TITLE
            dialog.border_subtitle = "ctrl+s save · escape cancel"
            yield Label("Advice (one or two sentences the model will see as a reference):")
            yield TextArea(id="text", soft_wrap=True, show_line_numbers=False)
            yield Label("Kind (the task kind it applies to, or general):")
            yield Input(d.get("kind", "general"), id="kind", placeholder="general")
            yield Label("Tags (comma-separated):")
            yield Input(d.get("tags", ""), id="tags", placeholder="reduction, bf16")
            yield Label("GPU arch (empty: any):")
            yield Input(d.get("arch", ""), id="arch", placeholder="sm_90")
            yield Label("Conditions (key=value; …):")
            yield Input(id="conditions", placeholder="dtypes=bf16; min_size=4096")
            yield Label("", id="error", classes="error")

    def on_mount(self) -> None:
        self.query_one("#text", TextArea).focus()

    def _error(self, message: str) -> None:
        self.query_one("#error", Label).update(message)

    def action_save(self) -> None:
        text = " ".join(self.query_one("#text", TextArea).text.split())
        if not text:
            self._error("The advice text is empty.")
            self.query_one("#text", TextArea).focus()
            return
        try:
            conditions = parse_conditions(self.query_one("#conditions", Input).value)
        except ConditionsError as e:
            self._error(str(e))
            self.query_one("#conditions", Input).focus()
            return
        tags = [t.strip() for t in self.query_one("#tags", Input).value.split(",") if t.strip()]
        self.dismiss({
            "text": text,
            "kind": self.query_one("#kind", Input).value.strip() or "general",
            "tags": tags,
            "arch": self.query_one("#arch", Input).value.strip() or None,
            "conditions": conditions,
        })

    def action_cancel(self) -> None:
        self.dismiss(None)
