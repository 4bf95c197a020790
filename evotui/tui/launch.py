"""``evotui TASK`` / ``evotui run TASK``: open the run, show the TUI, close the run.

The engine runs in a child process (``evotui.tui.process``): a crash of the engine, or its
long checkpoints, never take the UI down or stall its frames. Setup problems are printed as
one line before the TUI opens (exit code 2, as headless). When stdin or stdout is not a
terminal there is nothing to draw on: ``run_tui`` raises ``NotATerminal`` before it starts
anything, and the command line runs the headless face instead.
Logging goes to ``tui.log`` in the run directory while the TUI is up (never over the screen).
Whatever ends the app, the run is stopped and its report written before this returns.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from rich.console import Console

from evotui.engine.session import STOP_GRACE_S, RunOptions, SetupError
from evotui.tui.app import create_app
from evotui.tui.feed import EventFeed
from evotui.tui.process import EngineProcess


class NotATerminal(Exception):
    """stdin or stdout is not a terminal: the TUI has nothing to draw on."""


def _log_to(path: Path) -> logging.Handler:
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    if root.level == logging.NOTSET or root.level > logging.WARNING:
        root.setLevel(logging.WARNING)
    logging.getLogger("evotui").setLevel(logging.INFO)
    logging.captureWarnings(True)
    return handler


def run_tui(options: RunOptions) -> int:
    """Run with the TUI; returns the exit code (0 ended, 1 failed, 2 could not start)."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise NotATerminal("not a terminal")
    err = Console(stderr=True)
    feed = EventFeed()
    engine = EngineProcess(options)
    try:
        with err.status("opening the run: task, evaluator, model, advice library…"):
            engine.start(feed.on_event)
    except SetupError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except Exception as e:
        print(f"error: could not start the run: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    run_dir = engine.run_dir
    assert run_dir is not None
    feed.set_backend(str(engine.ready.get("backend") or "triton"))
    handler = _log_to(run_dir / "tui.log")
    app = create_app(engine, feed, notes=engine.notes)
    code: int | None = None
    try:
        code = app.run()
    finally:
        if not engine.finished:
            err.print(f"stopping the run (in flight: {STOP_GRACE_S:g} s) and writing the report…")
        engine.close(STOP_GRACE_S + 120)
        logging.getLogger().removeHandler(handler)
        handler.close()
    for line in (engine.finished_info or {}).get("summary") or []:
        print(line)
    if engine.error:
        print(f"engine error:\n{engine.error}", file=sys.stderr)
    print(f"report: {run_dir / 'report.json'}")
    if code is None:
        code = 1 if engine.outcome in (None, "failed") else 0
    return code
