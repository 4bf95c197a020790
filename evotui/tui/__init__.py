"""The live TUI (Textual): population, fitness, advice, diffs and the model's stream while
the engine runs, steered from the keyboard.

- ``feed``: the engine subscriber that folds events into immutable frames (no Textual);
- ``process`` / ``host``: the engine in a child process, and that child (no Textual);
  ``controller``: what the app asks of a run;
- ``app``: the app (``create_app``) and its key bindings; ``app.tcss`` its layout;
- one module per panel (``status``, ``population`` on ``table``, ``fitness`` on ``chart``,
  ``advice``, ``diff``, ``llm``), ``screens/`` for the forms, ``commands`` for the palette,
  ``toasts`` for which notices may pop up;
- ``launch``: ``run_tui(options)``, what ``evotui TASK`` and ``evotui run TASK`` call
  (``NotATerminal`` when there is nothing to draw on: the command line goes headless).

Importing this package does not import Textual (the engine's host process imports
``evotui.tui.host`` and must stay light); ``create_app`` and ``run_tui`` load it on use.
"""

from __future__ import annotations

from typing import Any

__all__ = ["EvotuiApp", "NotATerminal", "create_app", "run_tui"]


def __getattr__(name: str) -> Any:
    if name in ("EvotuiApp", "create_app"):
        from evotui.tui import app

        return getattr(app, name)
    if name in ("run_tui", "NotATerminal"):
        from evotui.tui import launch

        return getattr(launch, name)
    raise AttributeError(f"module 'evotui.tui' has no attribute {name!r}")
