"""The evolution engine: select → prompt → mutate → evaluate → record, on asyncio.

UI-agnostic (DESIGN §1): it emits events (``evotui.engine.events``) to subscribers and takes
commands through an inbox (``Engine.send``), applied between iterations. Several iterations
are in flight at once (by default one per evaluator lane plus one or two more), so model
generation overlaps evaluation. The seed candidate is evaluated first; a rejected seed ends
the run. ``config.iterations`` counts evaluated children (the seed and failed mutations do not
count). Every ``generation_size`` evaluated children make a generation; each ends with a
migration check, a ``GenerationDone`` event and an atomic checkpoint from which
``Engine(..., checkpoint=...)`` continues the same run.

A child becomes the new best only when it beats the incumbent by more than
``max(min_gain, spread_factor × the larger measured spread)``. On the CPU interpreter times
are interpreter wall times: they rank candidates but are never reported as speedups.

The parts of an iteration live beside this module: ``inflight`` (slots, pause, stop),
``advice`` (the advice library), ``proposing`` (parent → child), ``evaluating`` (child →
verdict), ``state`` (recording it) and ``checkpoints`` (the run directory for a resume).
Each is handed what it uses (``context``: the task and the callbacks), never the engine.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from evotui.core.metrics import Metrics
from evotui.engine import distillation
from evotui.engine import events as ev
from evotui.engine import report as reporting
from evotui.engine.advice import AdviceLink
from evotui.engine.bootstrap import SeedWriter, can_write_seed
from evotui.engine.checkpoints import Checkpoints, restore
from evotui.engine.context import RunTask
from evotui.engine.evaluating import EvalStep
from evotui.engine.hooks import AdviceLibrary, Evaluator
from evotui.engine.inflight import InFlight
from evotui.engine.mutators import EXHAUSTED, Mutator
from evotui.engine.patch import diff_text
from evotui.engine.population import Candidate, Population
from evotui.engine.proposing import Proposer
from evotui.engine.rundir import RunDir
from evotui.engine.state import EngineConfig, RunState
from evotui.engine.subscribers import Broadcast
from evotui.eval.results import EvalResult
from evotui.task.model import TaskRef

log = logging.getLogger(__name__)

__all__ = ["Engine", "RunResult"]


@dataclass(frozen=True)
class RunResult:
    outcome: str  # "completed" | "stopped" | "exhausted" | "failed"
    message: str
    evaluated: int
    best_id: str | None
    report: dict[str, Any]


class Engine:
    def __init__(
        self,
        task: TaskRef,
        evaluator: Evaluator,
        mutator: Mutator,
        config: EngineConfig | None = None,
        *,
        seed_source: str | None = None,
        memory: AdviceLibrary | None = None,
        run_dir: RunDir | None = None,
        checkpoint: dict[str, Any] | None = None,
        run_info: dict[str, Any] | None = None,
    ) -> None:
        if checkpoint is None and not seed_source and not can_write_seed(mutator):
            raise ValueError("a new run needs a seed candidate's source, or a model to write one")
        self.task = task
        self.run_task = RunTask.of(task, evaluator.is_cpu)  # source and facts, for prompts
        self.evaluator = evaluator
        self.mutator = mutator
        self.config = config or EngineConfig()
        self.memory = memory
        self.run_dir = run_dir
        self.run_info = dict(run_info or {})  # stored in checkpoints: what a resume needs
        if checkpoint is not None and not self.run_info.get("seed_origin"):
            self.run_info["seed_origin"] = (checkpoint.get("run") or {}).get("seed_origin")
        self.device_info: dict[str, Any] = {}  # "name", "arch" of the GPU when known
        self.advice_report: dict[str, Any] | None = None  # the end-of-run distillation
        self.resumed = checkpoint is not None
        self._seed_source = seed_source
        self._started: float | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._inbox: asyncio.Queue[ev.Command] = asyncio.Queue()
        self._events = Broadcast(run_dir)
        self._emit = self._events.emit
        self.state = RunState.new(self.config)  # checks the config, resumed or not
        if checkpoint is not None:
            self.state = restore(checkpoint, self.config, mutator, run_dir)
        self.inflight = InFlight()  # slots, pause and stop
        self._checkpoints = Checkpoints(self.state, mutator, task.path, run_dir, self.run_info,
                                        self.elapsed)
        self._advice = AdviceLink(memory, self.config.memory_k, self.run_task,
                                  evaluator.is_cpu, self._emit)
        self._proposer = Proposer(mutator, self.run_task, self.config, self.state, self._emit,
                                  self._finish)
        self._eval = EvalStep(evaluator, task, self.config, self.state, self._emit,
                              self._finish)

    # ---- public API ------------------------------------------------------------------------
    def subscribe(self, fn: Callable[[ev.Event], Any]) -> Callable[[], None]:
        """Receive every event. A plain callable runs on its own thread, a coroutine function
        in its own task: a slow subscriber never holds up the engine. Returns an unsubscribe."""
        return self._events.subscribe(fn)

    def send(self, command: ev.Command) -> None:
        """Queue a command; safe from any thread. Applied between iterations."""
        loop = self._loop
        if loop is not None and loop.is_running():
            try:
                running = asyncio.get_running_loop()
            except RuntimeError:
                running = None
            if running is not loop:
                loop.call_soon_threadsafe(self._inbox.put_nowait, command)
                return
        self._inbox.put_nowait(command)

    def pause(self) -> None:
        self.send(ev.Pause())

    def resume(self) -> None:
        self.send(ev.Resume())

    def stop(self, grace_s: float = 10.0) -> None:
        self.send(ev.Stop(grace_s))

    # ---- what the app reads (the rest is in ``self.state`` and ``self.inflight``) -----------
    @property
    def population(self) -> Population:
        return self.state.population

    @property
    def best(self) -> Candidate | None:
        return self.state.best

    @property
    def outcome(self) -> str | None:
        return self.state.outcome

    @property
    def paused(self) -> bool:
        return self.inflight.paused

    @property
    def in_flight(self) -> int:
        return self.inflight.reserved

    def elapsed(self) -> float:
        now = time.monotonic() - self._started if self._started is not None else 0.0
        return self.state.elapsed_before + now

    def evals_per_minute(self) -> float:
        return reporting.evals_per_minute(self.state.evaluated, self.elapsed())

    def report(self) -> dict[str, Any]:
        ev_ = self.evaluator
        return reporting.build_report(self.state, reporting.RunFigures(
            task=self.task, devices=tuple(ev_.devices), interpreter=ev_.is_cpu,
            gpu=self.device_info, mutator=self.mutator.name, model=self.mutator.model,
            llm=self.mutator.account.as_dict(), config=self.config,
            run_dir=self.run_dir.path if self.run_dir else None, elapsed=self.elapsed(),
            advice=self.advice_report, seed_origin=self.run_info.get("seed_origin")))

    def checkpoint_data(self) -> dict[str, Any]:
        """A consistent snapshot: candidates in flight are left out (a resume redoes them)."""
        return self._checkpoints.snapshot()

    async def run(self) -> RunResult:
        """Run until ``config.iterations`` children are evaluated, a Stop, exhaustion of the
        search or a fatal failure. Writes the report and the last checkpoint in any case."""
        self._loop = asyncio.get_running_loop()
        self._started = time.monotonic()
        self._events.start()
        inbox = asyncio.create_task(self._read_inbox())
        try:
            self._emit(ev.RunStarted(
                task=self.task.name, task_path=str(self.task.path),
                device=", ".join(self.evaluator.devices), interpreter=self.evaluator.is_cpu,
                mutator=self.mutator.name, model=self.mutator.model,
                iterations=self.config.iterations,
                run_dir=str(self.run_dir.path) if self.run_dir else None,
                resumed=self.resumed, evaluated=self.state.evaluated,
                device_name=str(self.device_info.get("name", "")),
                arch=self.device_info.get("arch")))
            await asyncio.to_thread(lambda: self.run_task.facts)  # traced once, off the loop
            if self.state.seed_id is None and self._seed_source is None:  # the model writes it
                await self.inflight.tracked(self._seed_writer().run(), "mutate")
            elif self.state.seed_id is None:
                await self.inflight.tracked(self._evaluate_seed(), "evaluate")
            if self.state.outcome is None and self.state.evaluated < self.config.iterations:
                await self._run_slots()
                if self.state.evaluated % self._generation_size():
                    await self._end_generation()  # the last, partial generation
            self._finish("completed", f"evaluated {self.state.evaluated} of "
                         f"{self.config.iterations} children")
        except Exception as e:  # an engine bug: end the run with a clear message and a report
            log.exception("engine failure")
            self._emit(ev.Status("engine error:\n" + traceback.format_exc(limit=6), "error"))
            self._finish("failed", f"engine error: {type(e).__name__}: {e}")
        finally:
            self._finish("stopped", f"interrupted after {self.state.evaluated} evaluated children")
            await self.inflight.cancel_all()
            if self.state.outcome == "stopped":  # evaluations in flight at the stop count too
                self.state.outcome_message = re.sub(
                    r"after \d+ evaluated", f"after {self.state.evaluated} evaluated",
                    self.state.outcome_message)
            await self._distill()  # the inbox still runs: a Stop cuts it short
            inbox.cancel()
            report = self.report()
            await self._checkpoints.write_final(report, self._emit)
            await self._events.close()
            await self.mutator.aclose()
        state = self.state
        return RunResult(state.outcome or "stopped", state.outcome_message, state.evaluated,
                         state.best_id, report)

    # ---- events and commands ---------------------------------------------------------------
    def _status(self, message: str, level: str = "info") -> None:
        self._emit(ev.Status(message, level))

    async def _read_inbox(self) -> None:
        while True:
            self._apply(await self._inbox.get())

    def _apply(self, cmd: ev.Command) -> None:
        if isinstance(cmd, ev.Pause):
            if not self.inflight.paused:
                self.inflight.pause()
                self._status(f"paused ({self.inflight.reserved} in flight finish first)")
        elif isinstance(cmd, ev.Resume):
            if self.inflight.paused:
                self.inflight.resume()
                self._status("resumed")
        elif isinstance(cmd, ev.Stop):
            self._request_stop(cmd.grace_s)
        elif isinstance(cmd, ev.Hint):
            self.state.add_hint(cmd.text, cmd.uses)
            self._status(f"hint for the next mutations: {cmd.text.strip()}" if cmd.text.strip()
                         else "hints cleared")
        elif isinstance(cmd, ev.PinParent):
            try:
                self.state.population.pin(cmd.id)
                self._status(f"{cmd.id} is the parent of the next mutation")
            except ValueError as e:
                self._status(str(e), "warning")
        elif isinstance(cmd, ev.AcceptAdvice | ev.VetoAdvice | ev.AuthorAdvice):
            asyncio.get_running_loop().create_task(self._advice.forward(cmd))
        else:
            self._status(f"unknown command {cmd!r}", "warning")

    def _request_stop(self, grace_s: float) -> None:
        if self.inflight.stopping and self.state.outcome == "stopped":  # a second Stop: now
            self.inflight.cancel()
            return
        self._finish("stopped",
                     f"stopped on request after {self.state.evaluated} evaluated children")
        self._status(f"stopping: {self.inflight.reserved} in flight get {grace_s:g} s to finish")
        self.inflight.cancel(spare_evaluations=grace_s > 0)
        if grace_s > 0 and self._loop is not None:
            self._loop.call_later(grace_s, self.inflight.cancel)

    def _finish(self, outcome: str, message: str) -> None:
        """Record why the run ends (the first reason wins) and stop starting iterations."""
        self.state.finish(outcome, message)
        self.inflight.stop_starting()

    # ---- the loop --------------------------------------------------------------------------
    async def _run_slots(self) -> None:
        n = self.config.concurrency or len(self.evaluator.lanes) + (
            1 if self.mutator.name == "param" else 2)
        await self.inflight.run_slots(max(1, n), self._iteration,
                                       lambda: self.config.iterations - self.state.evaluated)

    async def _iteration(self) -> None:
        self.inflight.set_phase("mutate")
        cid = self.state.population.new_id()
        parent = self.state.population.select_parent(self.state.rng)
        advice = await self._advice.retrieve(cid, parent, self.mutator.name == "param")
        mutation, parent = await self._proposer.propose(cid, parent, advice.block,
                                                        self.state.take_hints(), advice.items)
        if mutation.prompt and self.run_dir is not None:
            self.run_dir.write_llm_log(cid, mutation.prompt, mutation.reply)
        if mutation.failure_kind == EXHAUSTED:
            self._finish("exhausted", "the parameter search is exhausted: every setting of the "
                         "tunables has been tried (a model can take it further)")
            return
        mutation = self._proposer.reject_duplicate(mutation)
        if mutation.source is None or not mutation.ok:
            self._proposer.failed(cid, parent, mutation)
            return
        child = self._proposer.child(cid, parent, mutation, advice.views)
        self._emit(ev.CandidateProposed(
            id=cid, parent_id=parent.id, island=child.island, generation=child.generation,
            mutator=child.mutator, model=child.model, description=child.description,
            diff=diff_text(parent.source, child.source, parent.id, cid),
            advice_ids=tuple(child.advice_ids), parent_origin=parent.copy_of or parent.id))
        self.inflight.set_phase("evaluate")
        result = await self._eval.evaluate(child)
        improved = self._record(child, parent, result)
        generation_ends = self.state.evaluated % self._generation_size() == 0
        await self._advice.record_outcome(child.advice_ids, improved)
        if generation_ends:
            await self._end_generation()

    def _generation_size(self) -> int:
        return self.config.generation_size or max(4, len(self.evaluator.lanes))

    async def _evaluate_seed(self) -> None:
        assert self._seed_source is not None
        seed = Candidate(id=self.state.population.new_id(), source=self._seed_source,
                         mutator="seed", description="seed")
        self._emit(ev.CandidateProposed(id=seed.id, parent_id=None, island=0, generation=0,
                                        mutator="seed", model=None, description="seed", diff=""))
        self._status(f"evaluating the seed {seed.id} on {', '.join(self.evaluator.devices)}"
                     + (" (Triton interpreter)" if self.evaluator.is_cpu else ""))
        result = await self._eval.evaluate(seed)
        self.state.seed_id = seed.id
        self._record(seed, None, result)
        if not result.accepted:
            msg = f"the seed candidate was rejected ({result.reason}): {result.message}"
            self._status(msg, "error")
            self._finish("failed", msg)
            return
        await self._checkpoints.write()

    def _seed_writer(self) -> SeedWriter:
        return SeedWriter(self.mutator, self.run_task, self.config, self.state, self.run_dir,
                          advice=self._advice, evaluator=self._eval, inflight=self.inflight,
                          record=self._record, save=self._checkpoints.write, emit=self._emit,
                          finish=self._finish)

    def _record(self, c: Candidate, parent: Candidate | None, r: EvalResult) -> bool:
        """Store a verdict and announce it; returns whether the child beat its parent."""
        verdict = self.state.record(c, parent, r)
        self._emit(ev.CandidateEvaluated(
            id=c.id, accepted=r.accepted, reason=r.reason, message=r.message, metrics=c.metrics,
            parent_id=c.parent_id, new_best=verdict.new_best, improved=verdict.improved))
        return verdict.improved

    async def _end_generation(self) -> None:
        self.state.generation += 1
        migrants = self.state.population.maybe_migrate(self.state.generation, self.state.rng,
                                                 self.config.migration_interval)
        if migrants:
            self._status("migration: " + ", ".join(f"{m.copy_of}→island {m.island}"
                                                   for m in migrants))
        best, acc = self.state.best, self.mutator.account.as_dict()
        by_status = self.state.population.counts(seeds=False)["by_status"]
        self._emit(ev.GenerationDone(
            generation=self.state.generation, evaluated=self.state.evaluated,
            accepted=by_status["accepted"], rejected=by_status["rejected"],
            best_id=self.state.best_id, best=best.metrics if best else Metrics(),
            evals_per_minute=self.evals_per_minute(), llm_calls=acc["calls"],
            llm_failures=acc["failures"], prompt_tokens=acc["prompt_tokens"],
            completion_tokens=acc["completion_tokens"]))
        await self._checkpoints.write()

    async def _distill(self) -> None:
        """Successful mutations → proposed advice (``evotui.engine.distillation``). A Stop
        during it cancels it; what was stored by then stays."""
        distilling = distillation.after_run(
            self.state, self.config, self.run_task, memory=self.memory, evaluator=self.evaluator,
            mutator=self.mutator, run_dir=self.run_dir, gpu=self.device_info)
        try:
            r = await self.inflight.tracked(distilling, "distill")
        except Exception as e:  # never lose the report over the advice library
            r = distillation.off(f"failed: {type(e).__name__}: {e}")
        if r is None:
            r = distillation.off("cancelled by a stop request")
        self.advice_report = r
        line = distillation.status_line(r)
        if line is not None:
            self._status(*line)
