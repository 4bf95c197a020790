"""The official Ollama client (``ollama``), imported once for the whole package."""

from __future__ import annotations

import os
from typing import Any


def _import_ollama() -> tuple[Any, str | None]:
    """The client parses OLLAMA_HOST as it is imported and raises on a malformed one
    (`http://127.0.0.1:abc`): then it is imported without it, and every probe says why."""
    try:
        import ollama
    except ValueError as e:
        bad = os.environ.pop("OLLAMA_HOST", "")
        import ollama

        return ollama, f"OLLAMA_HOST={bad!r} is not a valid server address ({e})"
    return ollama, None


ollama, BAD_HOST_ENV = _import_ollama()
