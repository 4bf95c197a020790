"""``evotui TASK`` / ``evotui run TASK``: open the run, show the TUI, close the run.

Setup problems are printed as one line before the TUI opens (exit code 2, as headless).
When stdin or stdout is not a terminal there is nothing to draw on: the run goes headless.
Logging goes to ``tui.log`` in the run directory while the TUI is up (never over the screen).
Whatever ends the app, the run is stopped and its report written before this returns.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

from rich.console import Console

from evotui.engine.events import Stop
from evotui.engine.session import RunOptions, SetupError, open_session
from evotui.tui.app import STOP_GRACE_S, create_app
from evotui.tui.feed import EventFeed
from evotui.tui.runner import EngineRunner


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
        print("not a terminal: running headless", file=sys.stderr)
        from evotui import headless

        return headless.run(options)
    err = Console(stderr=True)
    feed = EventFeed()
    runner = EngineRunner(lambda: open_session(options))
    try:
        with err.status("opening the run: task, evaluator, model, advice library…"):
            runner.start(feed.on_event)
    except SetupError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except Exception as e:
        print(f"error: could not start the run: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    assert runner.session is not None
    run_dir = runner.session.run_dir.path
    handler = _log_to(run_dir / "tui.log")
    app = create_app(runner, feed, notes=runner.session.notes)
    code: int | None = None
    try:
        code = app.run()
    finally:
        if not runner.finished:
            err.print(f"stopping the run (in flight: {STOP_GRACE_S:g} s) and writing the report…")
            runner.stop(STOP_GRACE_S)
            if not runner.join(STOP_GRACE_S + 60):
                runner.send(Stop(0))
                runner.join(60)
        logging.getLogger().removeHandler(handler)
        handler.close()
    result = runner.result
    if result is not None:
        from evotui.engine.report import best_summary

        print(f"{result.outcome}: {result.message}")
        print(f"best {best_summary(result.report)}")
    if runner.error:
        print(f"engine error:\n{runner.error}", file=sys.stderr)
    print(f"report: {run_dir / 'report.json'}")
    if code is None:
        code = 1 if (result is None or result.outcome == "failed") else 0
    return code
