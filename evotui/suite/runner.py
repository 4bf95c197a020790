"""Running a suite: each problem an ordinary run (``engine.session.open_session``), one
evaluator pool for all of them, ``suite.json``/``suite.md`` rewritten as problems start and end.

Locally, problems run one at a time by default and the pool spreads each problem's evaluations
over every GPU of the host. On a Dask cluster, one problem per GPU worker runs at once by
default (one problem a job; its evaluations go wherever a GPU is free). With ``jobs`` > 1,
that many problems run at once, each with a share of the lanes in flight.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evotui.engine.hooks import Evaluator
from evotui.engine.rundir import CHECKPOINT
from evotui.engine.session import STOP_GRACE_S, RunOptions, Session, SetupError, open_session
from evotui.suite import record, report
from evotui.suite.record import (
    ACCEPTED,
    NO_KERNEL,
    NOT_STARTED,
    RUNNING,
    ProblemResult,
    SuiteSettings,
)
from evotui.suite.spec import Problem


@dataclass
class SuiteRun:
    folder: Path
    settings: SuiteSettings
    results: list[ProblemResult]
    created: str = field(default_factory=record.now)


@dataclass(frozen=True)
class Progress:
    """What a display is told: a problem started, moved on, or ended."""

    kind: str  # "start" | "tick" | "end" | "note"
    result: ProblemResult
    evaluated: int = 0
    text: str = ""


def open_suite(folder: Path, problems: list[Problem] | None,
               settings: SuiteSettings | None) -> SuiteRun:
    """The suite in ``folder``: the stored one (``problems`` must match), or a new one.
    ``problems``/``settings`` None: continue the stored suite as it was (``--resume``)."""
    stored = record.load(folder)
    if stored is None:
        if problems is None or settings is None:
            raise record.SpecError(f"nothing to resume in {folder}: no {record.SUITE_JSON}")
        results, created = record.results_for(problems, None), record.now()
    else:
        results = record.results_for(problems or record.problems_of(stored), stored)
        settings = settings or SuiteSettings.from_dict(stored.get("settings") or {})
        created = str(stored.get("created") or record.now())
    for r in results:
        if r.done:  # its run may have been continued since (`evotui run --resume`)
            _refresh(r, folder / r.run_dir)
    return SuiteRun(folder, settings, results, created)


def _refresh(r: ProblemResult, run_dir: Path) -> None:
    try:
        rep = json.loads((run_dir / "report.json").read_text())
    except (OSError, ValueError):
        return
    if isinstance(rep, dict) and rep.get("finished") != r.report_finished:
        _fill_from_report(r, rep)


def save(run: SuiteRun) -> None:
    run.folder.mkdir(parents=True, exist_ok=True)
    record.save(run.folder, report.build(run.settings, run.results, run.created),
                report.markdown(run.settings, run.results))


def _run_options(settings: SuiteSettings, r: ProblemResult, run_dir: Path,
                 resume: bool) -> RunOptions:
    extra: dict[str, Any] = {"allow_torch": list(settings.allow_torch) or None,
                             "shape": dict(settings.shape) or None}
    if resume:
        return RunOptions(task=r.task, resume=str(run_dir), iterations=settings.budget.iterations,
                          **extra)
    return RunOptions(task=r.task, seed=r.seed, device=settings.device,
                      iterations=settings.budget.iterations, mutator=settings.mutator,
                      model=settings.model, ollama_host=settings.ollama_host,
                      eval_timeout=settings.eval_timeout, memory_k=settings.memory_k,
                      out=str(run_dir), **extra)



def _seed_source(r: ProblemResult, session: Session) -> tuple[str, str]:
    """Where the problem's seed came from: a short word for the table (the seed file's name,
    --seed, derived, model) and the run's own account of it."""
    origin = str(session.options.seed_origin or "")
    if r.seed:
        return "--seed", origin
    if origin.startswith("derived"):
        return "derived", origin
    if origin.startswith("file "):
        return Path(origin.removeprefix("file ")).name, origin
    seed_path = session.engine.task.seed_path
    if seed_path is not None:
        return Path(seed_path).name, origin
    return ("model" if session.mode in ("llm", "mixed") else "derived"), origin


def _fill_from_report(r: ProblemResult, rep: dict[str, Any]) -> None:
    best = rep.get("best")
    r.outcome, r.message = rep.get("outcome"), str(rep.get("message") or "")
    r.evaluations = int(rep.get("evaluated") or 0)
    r.interpreter = bool(rep.get("interpreter"))
    r.device = rep.get("device")
    r.mutator = rep.get("mutator")
    r.wall_seconds = rep.get("wall_seconds")
    r.report_finished = rep.get("finished")
    if not best:
        r.status = NO_KERNEL
        r.reason = ("the time budget ran out before a kernel was accepted"
                    if r.time_budget_reached else r.message)
        return
    r.status, r.reason = ACCEPTED, ""
    r.best_id, r.time_ms = best.get("id"), best.get("time_ms")
    r.speedup_eager, r.speedup_compile = best.get("speedup_eager"), best.get("speedup_compile")
    r.roofline_pct = best.get("roofline_pct")
    t = r.time_ms
    r.eager_ms = t * r.speedup_eager if t and r.speedup_eager else None
    r.compile_ms = t * r.speedup_compile if t and r.speedup_compile else None


class SuiteRunner:
    """Runs the unfinished problems of ``run`` on ``evaluator``; ``stop()`` interrupts."""

    def __init__(self, run: SuiteRun, evaluator: Evaluator,
                 on_progress: Callable[[Progress], None] | None = None) -> None:
        self.run = run
        self.evaluator = evaluator
        self.on_progress = on_progress or (lambda p: None)
        self.stopping = False
        self._engines: dict[str, Any] = {}
        self._stops = 0
        self._save_lock = asyncio.Lock()

    def stop(self) -> None:
        """First call: running problems get a few seconds, then stop resumable; second: now."""
        self._stops += 1
        self.stopping = True
        for engine in list(self._engines.values()):
            engine.stop(STOP_GRACE_S if self._stops == 1 else 0)

    def jobs(self) -> int:
        """Problems at once: as asked, else one per GPU worker of a cluster, else one."""
        asked = self.run.settings.jobs
        if asked:
            return asked
        return max(1, len(self.evaluator.lanes)) if self.run.settings.scheduler else 1

    async def _save(self) -> None:
        async with self._save_lock:
            await asyncio.to_thread(save, self.run)

    async def run_all(self) -> bool:
        """Run what is left; True when every problem has been attempted (not interrupted)."""
        await self._save()
        todo = [r for r in self.run.results if not r.done]
        jobs = max(1, min(self.jobs(), len(todo) or 1))
        queue: asyncio.Queue[ProblemResult] = asyncio.Queue()
        for r in todo:
            queue.put_nowait(r)

        async def worker() -> None:
            while not self.stopping and not queue.empty():
                await self._run_problem(queue.get_nowait(), jobs)

        await asyncio.gather(*(worker() for _ in range(jobs)))
        await self._save()
        return not self.stopping

    async def _run_problem(self, r: ProblemResult, jobs: int) -> None:
        settings = self.run.settings
        run_dir = self.run.folder / r.run_dir
        resume = (run_dir / CHECKPOINT).is_file()
        r.status, r.reason, r.attempts = RUNNING, "", r.attempts + 1
        r.started = r.started or record.now()
        await self._save()
        self.on_progress(Progress("start", r))
        try:
            session = await open_session(_run_options(settings, r, run_dir, resume),
                                         evaluator=self.evaluator)
        except SetupError as e:
            return await self._not_started(r, str(e))
        except Exception as e:  # noqa: BLE001 - one problem's surprise must not end the suite
            return await self._not_started(r, f"{type(e).__name__}: {e}")
        engine = session.engine
        if r.seed_source is None:
            r.seed_source, r.seed_detail = _seed_source(r, session)
        r.allow_torch = await _allowed_ops_called(engine, settings)
        r.allow_torch_option = bool(set(r.allow_torch) & set(settings.allow_torch))
        for note in session.notes:
            self.on_progress(Progress("note", r, text=note))
        if jobs > 1:  # a share of the lanes each, so that no problem waits on the others
            engine.config.concurrency = max(1, len(self.evaluator.lanes) // jobs) + 1
        timer = asyncio.create_task(self._time_budget(r, engine, resume))
        ticker = asyncio.create_task(self._tick(r, engine))
        self._engines[r.name] = engine
        try:
            if self.stopping:
                engine.stop(0)
            result = await engine.run()
        finally:
            self._engines.pop(r.name, None)
            ticker.cancel()
            timer.cancel()
            await session.aclose()
        _fill_from_report(r, result.report)
        if self.stopping and not r.time_budget_reached and result.outcome == "stopped":
            r.status = RUNNING  # interrupted: the next invocation resumes it
        else:
            r.finished = record.now()
        await self._save()
        self.on_progress(Progress("end", r, evaluated=r.evaluations))

    async def _not_started(self, r: ProblemResult, reason: str) -> None:
        r.status, r.reason, r.finished = NOT_STARTED, reason, record.now()
        await self._save()
        self.on_progress(Progress("end", r))

    async def _time_budget(self, r: ProblemResult, engine: Any, resumed: bool) -> None:
        """Stop the problem's run once its time budget is spent. The clock starts when the
        seed has its verdict: its first judgement also times eager PyTorch and torch.compile
        (a minute and more for a big problem), which a short budget would otherwise cut
        before any kernel was judged. A resumed run counts the time it spent before."""
        seconds = self.run.settings.budget.seconds
        if seconds is None:
            return
        with contextlib.suppress(asyncio.CancelledError):
            while engine.best is None:  # a rejected seed ends the run, and this task
                await asyncio.sleep(0.25)
            await asyncio.sleep(max(0.0, seconds - engine.elapsed() if resumed else seconds))
            r.time_budget_reached = True
            engine.stop(STOP_GRACE_S)

    async def _tick(self, r: ProblemResult, engine: Any) -> None:
        with contextlib.suppress(asyncio.CancelledError):
            while True:
                self.on_progress(Progress("tick", r, evaluated=engine.state.evaluated))
                await asyncio.sleep(0.5)


def open_evaluator(settings: SuiteSettings) -> tuple[Evaluator, str | None]:
    """The pool every problem shares (every GPU of the host, or a Dask cluster's workers) and
    a warning for the user, if any. SetupError (one line) when it cannot be opened or cannot
    sandbox."""
    if settings.scheduler:
        from evotui.eval.dask_pool import DaskEvaluatorPool

        try:
            return DaskEvaluatorPool(settings.scheduler, device=settings.device), None
        except ValueError as e:
            raise SetupError(f"--scheduler {settings.scheduler!r} is not a scheduler address "
                             f"({e}): give one such as tcp://host:8786") from None
        except RuntimeError as e:
            raise SetupError(str(e)) from None
    from evotui.eval import EvaluatorPool

    try:
        pool = EvaluatorPool(settings.device)
    except RuntimeError as e:
        raise SetupError(str(e)) from None
    sandbox = pool.sandbox_state()
    if sandbox.problem:
        pool.close()
        raise SetupError(sandbox.problem)
    return pool, sandbox.warning


__all__ = ["NOT_STARTED", "Progress", "SuiteRun", "SuiteRunner", "open_evaluator", "open_suite",
           "save"]


async def _allowed_ops_called(engine: Any, settings: SuiteSettings) -> list[str]:
    """The allowed torch ops (the task's own and --allow-torch) that the reference calls:
    a problem is marked only where a kernel could keep one of them (a GEMM is not marked
    for a convolution the suite allowed)."""
    allowed = list(dict.fromkeys([*engine.task.meta.allow_torch, *settings.allow_torch]))
    if not allowed:
        return []
    facts = await asyncio.to_thread(lambda: engine.run_task.facts)
    if not facts.ops:  # the reference could not be traced: any of them may have been kept
        return allowed
    return [op for op in allowed if op.removeprefix("aten::").split(".")[0] in facts.ops]
