"""The LLM panel: the model's tokens as they stream (a capped plain-text log)."""

from __future__ import annotations

from typing import Any

from textual.widgets import Log

MAX_LINES = 500


class LLMPanel(Log):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(max_lines=MAX_LINES, auto_scroll=True, **kwargs)
        self.border_title = "LLM"

    def feed(self, text: str) -> None:
        if text:
            self.write(text)
