"""Messages the app receives from outside its own loop."""

from __future__ import annotations

from textual.message import Message


class EngineFinished(Message):
    """The run is over and its session closed (posted from the thread that reads the engine
    process's pipe; ``post_message`` is thread-safe)."""
