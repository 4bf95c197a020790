"""The live TUI (Textual): population, fitness, advice, diffs and the model's stream while
the engine runs, steered from the keyboard.

- ``feed``: the engine subscriber that folds events into immutable frames (no Textual);
- ``runner``: the engine on its own thread, and what the UI may ask of it (no Textual);
- ``app``: the app (``create_app``) and its key bindings; ``app.tcss`` its layout;
- one module per panel (``status``, ``population``, ``fitness``, ``advice``, ``diff``,
  ``llm``), ``screens/`` for the forms, ``commands`` for the palette;
- ``launch``: ``run_tui(options)``, what ``evotui TASK`` and ``evotui run TASK`` call.
"""

from evotui.tui.app import EvotuiApp, create_app
from evotui.tui.launch import run_tui

__all__ = ["EvotuiApp", "create_app", "run_tui"]
