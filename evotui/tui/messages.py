"""Messages the app receives from outside its own loop."""

from __future__ import annotations

from textual.message import Message


class EngineFinished(Message):
    """The engine thread is done: the run is over and the session closed (posted from the
    engine thread; ``post_message`` is thread-safe)."""
