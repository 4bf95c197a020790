"""The suite's progress on stderr: a bar of problems done, a line per running problem with its
evaluations, and one line per problem that ends."""

from __future__ import annotations

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from evotui.core.metrics import ratio_parts
from evotui.suite.record import ACCEPTED, NOT_STARTED, ProblemResult
from evotui.suite.runner import Progress as Step


def _speed(r: ProblemResult) -> str:
    if r.interpreter:
        return f"{r.time_ms:.1f} ms interpreter wall time" if r.time_ms else "not timed"
    parts = ratio_parts(r.speedup_eager, r.speedup_compile, r.roofline_pct)
    return ", ".join(parts) or "no speedup measured"


def _n(evaluations: int) -> str:
    return f"{evaluations} evaluation{'' if evaluations == 1 else 's'}"


def ended_line(r: ProblemResult) -> tuple[str, str]:
    """The line printed when a problem ends, and its style."""
    if r.status == ACCEPTED:
        return f"✓ {r.name}: accepted, {_speed(r)} ({_n(r.evaluations)})", "green"
    if r.status == NOT_STARTED:
        return f"✗ {r.name}: could not start: {r.reason}", "red"
    if not r.finished:
        return f"… {r.name}: interrupted after {_n(r.evaluations)} (resumable)", "yellow"
    return f"✗ {r.name}: no accepted kernel: {r.reason} ({_n(r.evaluations)})", "red"


class SuiteDisplay:
    """``on_progress`` for ``SuiteRunner``; a context manager around the live bars."""

    def __init__(self, console: Console, total: int, done: int, budget: int | None) -> None:
        self.console = console
        self.budget = budget
        self.progress = Progress(TextColumn("{task.description}"), BarColumn(),
                                 MofNCompleteColumn(), TimeElapsedColumn(), console=console,
                                 transient=True)
        self.overall = self.progress.add_task("problems", total=total, completed=done)
        self.rows: dict[str, TaskID] = {}

    def __enter__(self) -> SuiteDisplay:
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def __call__(self, step: Step) -> None:
        r = step.result
        if step.kind == "start":
            self.rows[r.name] = self.progress.add_task(f"  {r.name} · evaluations",
                                                       total=self.budget, completed=r.evaluations)
        elif step.kind == "tick" and r.name in self.rows:
            self.progress.update(self.rows[r.name], completed=step.evaluated)
        elif step.kind == "note":
            self.progress.console.print(f"  {r.name}: {step.text}", style="dim", highlight=False)
        elif step.kind == "end":
            row = self.rows.pop(r.name, None)
            if row is not None:
                self.progress.remove_task(row)
            line, style = ended_line(r)
            self.progress.console.print(line, style=style, highlight=False)
            if r.finished:
                self.progress.advance(self.overall)
