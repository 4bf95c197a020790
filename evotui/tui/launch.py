"""``evotui TASK`` / ``evotui run TASK``: open the run, show the TUI, close the run.

The engine runs in a child process (``evotui.tui.process``; ``EVOTUI_ENGINE=thread`` keeps
it in this one). Setup problems are printed as one line before the TUI opens (exit code 2,
as headless).
When stdin or stdout is not a terminal there is nothing to draw on: the run goes headless.
Logging goes to ``tui.log`` in the run directory while the TUI is up (never over the screen).
Whatever ends the app, the run is stopped and its report written before this returns.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

from rich.console import Console

from evotui.engine.events import Stop
from evotui.engine.session import RunOptions, SetupError, open_session
from evotui.tui.app import STOP_GRACE_S, create_app
from evotui.tui.feed import EventFeed
from evotui.tui.process import EngineProcess
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


def _controller(options: RunOptions) -> EngineProcess | EngineRunner:
    if os.environ.get("EVOTUI_ENGINE") == "thread":  # one process (debugging)
        return EngineRunner(lambda: open_session(options))
    return EngineProcess(options)


def run_tui(options: RunOptions) -> int:
    """Run with the TUI; returns the exit code (0 ended, 1 failed, 2 could not start)."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        print("not a terminal: running headless", file=sys.stderr)
        from evotui import headless

        return headless.run(options)
    err = Console(stderr=True)
    feed = EventFeed()
    engine = _controller(options)
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
    if isinstance(engine, EngineProcess):
        feed.set_backend(str(engine.ready.get("backend") or "triton"))
    handler = _log_to(run_dir / "tui.log")
    notes = engine.notes if isinstance(engine, EngineProcess) else engine.session.notes
    app = create_app(engine, feed, notes=notes)
    code: int | None = None
    try:
        code = app.run()
    finally:
        if not engine.finished:
            err.print(f"stopping the run (in flight: {STOP_GRACE_S:g} s) and writing the report…")
        if isinstance(engine, EngineProcess):
            engine.close(STOP_GRACE_S + 120)
        elif not engine.finished:
            engine.stop(STOP_GRACE_S)
            if not engine.join(STOP_GRACE_S + 60):
                engine.send(Stop(0))
                engine.join(60)
        logging.getLogger().removeHandler(handler)
        handler.close()
    for line in _summary(engine):
        print(line)
    if engine.error:
        print(f"engine error:\n{engine.error}", file=sys.stderr)
    print(f"report: {run_dir / 'report.json'}")
    if code is None:
        code = 1 if _outcome(engine) in (None, "failed") else 0
    return code


def _outcome(engine: EngineProcess | EngineRunner) -> str | None:
    if isinstance(engine, EngineProcess):
        return engine.outcome
    return engine.result.outcome if engine.result is not None else None


def _summary(engine: EngineProcess | EngineRunner) -> list[str]:
    if isinstance(engine, EngineProcess):
        return list((engine.finished_info or {}).get("summary") or [])
    result = engine.result
    if result is None:
        return []
    from evotui.engine.report import best_summary

    return [f"{result.outcome}: {result.message}", f"best {best_summary(result.report)}"]
