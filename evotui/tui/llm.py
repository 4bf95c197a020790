"""The LLM panel: the model's tokens as they stream (a capped plain-text log)."""

from __future__ import annotations

from typing import Any

from textual.widgets import Log

MAX_LINES = 300
LINE_CACHE = 128  # rendered lines kept (Log keeps 1,024: every one is for the GC to walk)


class LLMPanel(Log):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(max_lines=MAX_LINES, auto_scroll=True, **kwargs)
        self.border_title = "LLM"
        if hasattr(self, "_render_line_cache"):
            from textual.cache import LRUCache

            self._render_line_cache = LRUCache(LINE_CACHE)

    def feed(self, text: str) -> None:
        if text:
            self.write(text)
