"""The headless face: run the engine with a rich progress display, for scripts and long runs.

Progress goes to stderr (a live line: generation, evaluations, best, evaluations per minute,
model calls and tokens; plus one line per evaluated candidate); the final summary and the
report's path go to stdout. Ctrl-C (or SIGTERM) stops cleanly: in-flight evaluations get a
few seconds, then the checkpoint and the report are written. A second Ctrl-C stops at once.

Exit codes: 0 the run ended (completed, stopped, search exhausted — also when the model only
repeats itself or answers without code: the best is kept); 1 it failed (the seed was rejected,
the model server went away); 2 it could not start (``SetupError``).
"""

from __future__ import annotations

import asyncio
import signal
import sys
import threading
import time
from typing import Any

from rich.console import Console
from rich.live import Live
from rich.text import Text

from evotui.core.metrics import Metrics, ratio_parts
from evotui.engine.events import (
    CandidateEvaluated,
    CandidateProposed,
    Event,
    GenerationDone,
    LLMChunk,
    RunFinished,
    RunStarted,
    Status,
)
from evotui.engine.hooks import AdviceLibrary, Evaluator
from evotui.engine.session import STOP_GRACE_S, RunOptions, SetupError, open_session, summary_lines

_LEVEL_STYLE = {"info": "dim", "warning": "yellow", "error": "bold red"}


def _clip(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


class ProgressDisplay:
    """An engine subscriber (it runs on its own thread) drawing a rich live status line."""

    def __init__(self, console: Console, iterations: int) -> None:
        self.console = console
        self.iterations = iterations
        self.interpreter = False
        self.task = ""
        self.generation = 0
        self.evaluated = 0
        self.best = "—"
        self.epm = 0.0
        self.llm = "no model"
        self.streaming: dict[str, int] = {}
        self.proposed: dict[str, CandidateProposed] = {}
        self.started = time.monotonic()
        self._lock = threading.Lock()
        self.live = Live(console=console, get_renderable=self.render, refresh_per_second=4,
                         transient=True)

    def __enter__(self) -> ProgressDisplay:
        self.live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.live.stop()

    def render(self) -> Text:
        with self._lock:
            minutes = (time.monotonic() - self.started) / 60
            epm = self.epm or (self.evaluated / minutes if minutes > 0 else 0.0)
            stream = (f" · streaming {', '.join(f'{k} ({v} chars)' for k, v in self.streaming.items())}"
                      if self.streaming else "")
            return Text(f"{self.task} · gen {self.generation} · evaluated {self.evaluated}/"
                        f"{self.iterations} · best {self.best} · {epm:.1f} evals/min · "
                        f"{self.llm}{stream}", style="bold")

    def on_event(self, ev: Event) -> None:
        with self._lock:
            line = self._apply(ev)
        if line is not None:
            self.console.print(line, highlight=False)

    def _apply(self, ev: Event) -> Text | str | None:
        if isinstance(ev, LLMChunk):
            self.streaming[ev.candidate_id] = self.streaming.get(ev.candidate_id, 0) + len(ev.text)
            return None
        if isinstance(ev, RunStarted):
            self.task, self.interpreter, self.evaluated = ev.task, ev.interpreter, ev.evaluated
            self.iterations = ev.iterations
            where = f"{ev.device} (Triton CPU interpreter: times are not kernel speed)" \
                if ev.interpreter else ev.device
            model = f" with {ev.model}" if ev.model else ""
            verb = "resuming" if ev.resumed else "starting"
            return Text(f"{verb} {ev.task} on {where}: {ev.mutator} mutator{model}, "
                        f"{ev.iterations} iterations → {ev.run_dir}", style="bold")
        if isinstance(ev, CandidateProposed):
            self.proposed[ev.id] = ev
            return None
        if isinstance(ev, CandidateEvaluated):
            return self._evaluated(ev)
        if isinstance(ev, GenerationDone):
            self.generation, self.evaluated, self.epm = ev.generation, ev.evaluated, ev.evals_per_minute
            if ev.best_id is not None:
                self.best = f"{ev.best_id} " + _speed(ev.best, self.interpreter)
            tokens = f"{ev.prompt_tokens / 1000:.1f}k+{ev.completion_tokens / 1000:.1f}k tokens"
            if ev.llm_calls:
                self.llm = f"LLM {ev.llm_calls} calls ({ev.llm_failures} failed), {tokens}"
            return None
        if isinstance(ev, Status):
            if ev.level == "info" and ev.message.startswith("evaluating the seed"):
                return Text(ev.message, style="dim")
            return Text(ev.message, style=_LEVEL_STYLE.get(ev.level, ""))
        if isinstance(ev, RunFinished):
            self.streaming.clear()
            return None
        return None

    def _evaluated(self, ev: CandidateEvaluated) -> Text:
        self.streaming.pop(ev.id, None)
        prop = self.proposed.pop(ev.id, None)
        if prop is not None and prop.mutator != "seed":
            self.evaluated += 1
        what = ev.id
        if prop is not None and prop.parent_id:
            what += f" ← {prop.parent_origin or prop.parent_id}"
        how = ""
        if prop is not None and prop.mutator == "seed":
            how = f" (generation 0 by {prop.model})" if prop.model else " (the seed)"
        elif prop is not None:
            how = f" {prop.mutator} {_clip(prop.description, 48)}"
        if ev.accepted:
            verdict = f"accepted, {_speed(ev.metrics)}"
        else:
            verdict = f"rejected {ev.reason}: {_clip(ev.message, 80)}"
        star = " ★ new best" if ev.new_best else ""
        if ev.new_best:
            self.best = f"{ev.id} {_speed(ev.metrics)}"
        style = "green" if star else ("" if ev.accepted else "red")
        return Text(f"{what}{how}: {verdict}{star}", style=style)


def _speed(m: Metrics, interpreter: bool = False) -> str:
    """A candidate's figures in one line; ``interpreter``: the run's, when the record's own
    flag is not known."""
    if m.time_ms is None:
        return "(not timed)"
    if m.interpreter or interpreter:
        return f"{m.time_ms:.1f} ms interpreter wall time"
    return ", ".join([f"{m.time_ms * 1000:.1f} µs", *ratio_parts(
        m.speedup_eager, m.speedup_compile, m.roofline_pct, ("eager", "compile", "% roofline"))])


def _install_signals(loop: asyncio.AbstractEventLoop, stop: Any) -> list[int]:
    if threading.current_thread() is not threading.main_thread():
        return []
    installed = []
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(sig, stop)
            installed.append(sig)
        except (NotImplementedError, RuntimeError, ValueError):
            pass
    return installed


async def arun(options: RunOptions, *, evaluator: Evaluator | None = None,
               memory: AdviceLibrary | None = None, console: Console | None = None,
               out: Any = None) -> int:
    """Run headless; returns the exit code. ``evaluator``: reuse a pool (it stays open)."""
    err = console or Console(stderr=True)
    stdout = out or sys.stdout
    try:
        session = await open_session(options, evaluator=evaluator, memory=memory)
    except SetupError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    engine = session.engine
    for note in session.notes:
        err.print(note, style="yellow" if note.startswith("No LLM") else "", highlight=False)
    display = ProgressDisplay(err, engine.config.iterations)
    engine.subscribe(display.on_event)
    loop = asyncio.get_running_loop()
    presses = 0

    def on_signal() -> None:
        nonlocal presses
        presses += 1
        if presses == 1:
            err.print(f"stopping (in-flight evaluations get {STOP_GRACE_S:g} s; "
                      "press Ctrl-C again to stop at once)…", style="yellow")
        engine.stop(STOP_GRACE_S if presses == 1 else 0)

    installed = _install_signals(loop, on_signal)
    try:
        with display:
            result = await engine.run()
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)
        await session.aclose()
    report = result.report
    llm = report["llm"]
    for line in summary_lines(result.outcome, result.message, report):
        print(line, file=stdout)
    if llm["calls"]:
        print(f"model: {llm['calls']} calls, {llm['failures']} failures, "
              f"{llm['prompt_tokens']} prompt + {llm['completion_tokens']} completion tokens",
              file=stdout)
    print(f"report: {session.run_dir.path / 'report.json'}", file=stdout)
    return 1 if result.outcome == "failed" else 0


def run(options: RunOptions, **kwargs: Any) -> int:
    """Synchronous entry point (``asyncio.run``)."""
    return asyncio.run(arun(options, **kwargs))
