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
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import random
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from evotui.engine import events as ev
from evotui.engine import report as reporting
from evotui.engine.hooks import Evaluator, MemoryHook, advice_block, advice_view, call
from evotui.engine.mutators import (
    DUPLICATE,
    EXHAUSTED,
    EXTRACTION_KINDS,
    Mutation,
    MutationRequest,
    Mutator,
)
from evotui.engine.patch import diff_text
from evotui.engine.population import Candidate, Population
from evotui.engine.prompting import Inspiration, PromptContext, describe_metrics
from evotui.engine.rundir import RunDir
from evotui.engine.state import EngineConfig, RunState
from evotui.engine.subscribers import Subscriber
from evotui.engine.tunables import config_key
from evotui.eval import reasons
from evotui.eval.results import EvalRequest, EvalResult
from evotui.task import TaskRef

log = logging.getLogger(__name__)

__all__ = ["Engine", "EngineConfig", "Evaluator", "MemoryHook", "RunResult"]


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
        memory: MemoryHook | None = None,
        run_dir: RunDir | None = None,
        checkpoint: dict[str, Any] | None = None,
        run_info: dict[str, Any] | None = None,
    ) -> None:
        if checkpoint is None and not seed_source:
            raise ValueError("a new run needs a seed candidate's source")
        self.task = task
        self.task_source = task.source()
        self.evaluator = evaluator
        self.mutator = mutator
        self.config = config or EngineConfig()
        self.memory = memory
        self.run_dir = run_dir
        self.run_info = dict(run_info or {})  # stored in checkpoints: what a resume needs
        self.device_info: dict[str, Any] = {}  # "name", "arch" of the GPU when known
        self.advice_report: dict[str, Any] | None = None  # the end-of-run distillation
        self.resumed = checkpoint is not None
        self.state = RunState.new(self.config)
        self._seed_source = seed_source
        self._started: float | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._inbox: asyncio.Queue[ev.Command] = asyncio.Queue()
        self._running = asyncio.Event()
        self._running.set()
        self._change = asyncio.Event()
        self._ckpt_lock = asyncio.Lock()
        self._checkpoint_seq = itertools.count(1)
        self._subscribers: list[Subscriber] = []
        self._phase: dict[asyncio.Task[Any], str] = {}  # "idle" | "mutate" | "evaluate"
        self._reserved = 0  # iterations started and not yet recorded or failed
        self._stopping = False
        self._failures_in_a_row = 0
        self._harness_errors_in_a_row = 0
        self._log_failed = False
        if checkpoint is not None:
            self._restore(checkpoint)

    # ---- public API ------------------------------------------------------------------------
    def subscribe(self, fn: Callable[[ev.Event], Any]) -> Callable[[], None]:
        """Receive every event. A plain callable runs on its own thread, a coroutine function
        in its own task: a slow subscriber never holds up the engine. Returns an unsubscribe."""
        sub = Subscriber(fn)
        self._subscribers.append(sub)
        if self._loop is not None:
            sub.start()

        def unsubscribe() -> None:
            if sub in self._subscribers:
                self._subscribers.remove(sub)
                if self._loop is not None:
                    self._loop.create_task(sub.close(0))

        return unsubscribe

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

    # ---- read-only views of the run's state (``self.state``) --------------------------------
    @property
    def population(self) -> Population:
        return self.state.population

    @property
    def evaluated(self) -> int:
        return self.state.evaluated

    @property
    def generation(self) -> int:
        return self.state.generation

    @property
    def seed_id(self) -> str | None:
        return self.state.seed_id

    @property
    def best_id(self) -> str | None:
        return self.state.best_id

    @property
    def best(self) -> Candidate | None:
        return self.state.best

    @property
    def hints(self) -> list[list[Any]]:
        return self.state.hints

    @property
    def rng(self) -> random.Random:
        return self.state.rng

    @property
    def outcome(self) -> str | None:
        return self.state.outcome

    @property
    def outcome_message(self) -> str:
        return self.state.outcome_message

    @property
    def eval_seconds(self) -> float:
        return self.state.eval_seconds

    @property
    def paused(self) -> bool:
        return not self._running.is_set()

    @property
    def in_flight(self) -> int:
        return self._reserved

    def elapsed(self) -> float:
        now = time.monotonic() - self._started if self._started is not None else 0.0
        return self.state.elapsed_before + now

    def evals_per_minute(self) -> float:
        minutes = self.elapsed() / 60
        return round(self.evaluated / minutes, 2) if minutes > 0 else 0.0

    def account(self) -> dict[str, Any]:
        return self.mutator.account.as_dict()

    def report(self) -> dict[str, Any]:
        return reporting.build_report(self)

    async def run(self) -> RunResult:
        """Run until ``config.iterations`` children are evaluated, a Stop, exhaustion of the
        search or a fatal failure. Writes the report and the last checkpoint in any case."""
        self._loop = asyncio.get_running_loop()
        self._started = time.monotonic()
        for sub in self._subscribers:
            sub.start()
        inbox = asyncio.create_task(self._read_inbox())
        try:
            self._emit(ev.RunStarted(
                task=self.task.name, task_path=str(self.task.path),
                device=", ".join(self.evaluator.devices), interpreter=self.evaluator.is_cpu,
                mutator=self.mutator.name, model=self.mutator.model,
                iterations=self.config.iterations,
                run_dir=str(self.run_dir.path) if self.run_dir else None,
                resumed=self.resumed, evaluated=self.evaluated,
                device_name=str(self.device_info.get("name", "")),
                arch=self.device_info.get("arch")))
            if self.seed_id is None:
                await self._tracked(self._evaluate_seed())
            if self.outcome is None and self.evaluated < self.config.iterations:
                await self._run_slots()
                if self.evaluated % self._generation_size():
                    await self._end_generation()  # the last, partial generation
            self._finish("completed", f"evaluated {self.evaluated} of {self.config.iterations} "
                         "children")
        except Exception as e:  # an engine bug: end the run with a clear message and a report
            log.exception("engine failure")
            self._emit(ev.Status("engine error:\n" + traceback.format_exc(limit=6), "error"))
            self._finish("failed", f"engine error: {type(e).__name__}: {e}")
        finally:
            self._finish("stopped", f"interrupted after {self.evaluated} evaluated children")
            await self._cancel_all()
            await self._distill()  # the inbox still runs: a Stop cuts it short
            inbox.cancel()
            report = await self._write_final()
            for sub in self._subscribers:
                await sub.close()
            await self.mutator.aclose()
        return RunResult(self.outcome or "stopped", self.outcome_message, self.evaluated,
                         self.best_id, report)

    # ---- events and commands ---------------------------------------------------------------
    def _emit(self, event: ev.Event) -> None:
        if self.run_dir is not None:
            try:
                self.run_dir.log(event)
            except OSError as e:
                if not self._log_failed:
                    self._log_failed = True
                    log.warning("cannot write events.jsonl: %s", e)
        for sub in self._subscribers:
            sub.put(event)

    def _status(self, message: str, level: str = "info") -> None:
        self._emit(ev.Status(message, level))

    async def _read_inbox(self) -> None:
        while True:
            self._apply(await self._inbox.get())

    def _apply(self, cmd: ev.Command) -> None:
        if isinstance(cmd, ev.Pause):
            if not self.paused:
                self._running.clear()
                self._status(f"paused ({self._reserved} in flight finish first)")
        elif isinstance(cmd, ev.Resume):
            if self.paused:
                self._running.set()
                self._status("resumed")
        elif isinstance(cmd, ev.Stop):
            self._request_stop(cmd.grace_s)
        elif isinstance(cmd, ev.Hint):
            self.state.add_hint(cmd.text, cmd.uses)
            self._status(f"hint for the next mutations: {cmd.text.strip()}" if cmd.text.strip()
                         else "hints cleared")
        elif isinstance(cmd, ev.PinParent):
            try:
                self.population.pin(cmd.id)
                self._status(f"{cmd.id} is the parent of the next mutation")
            except ValueError as e:
                self._status(str(e), "warning")
        elif isinstance(cmd, ev.AcceptAdvice | ev.VetoAdvice | ev.AuthorAdvice):
            asyncio.get_running_loop().create_task(self._forward_advice(cmd))
        else:
            self._status(f"unknown command {cmd!r}", "warning")

    async def _forward_advice(self, cmd: ev.AcceptAdvice | ev.VetoAdvice | ev.AuthorAdvice) -> None:
        name = {"accept_advice": "accept", "veto_advice": "veto", "author_advice": "author"}[cmd.kind]
        fn = getattr(self.memory, name, None) if self.memory is not None else None
        if fn is None:
            self._status(f"cannot {name} advice: no advice library with `{name}` is attached",
                         "warning")
            return
        try:
            if isinstance(cmd, ev.AuthorAdvice):
                got = await call(fn, cmd.text, **cmd.fields)
                self._status(f"advice added: {getattr(got, 'id', got)}")
            else:
                await call(fn, cmd.id)
                self._status(f"advice {cmd.id} {name}ed")
        except Exception as e:
            self._status(f"advice {name} failed: {type(e).__name__}: {e}", "warning")

    def _request_stop(self, grace_s: float) -> None:
        if self._stopping and self.outcome == "stopped":  # a second Stop: now
            for task in list(self._phase):
                task.cancel()
            return
        self._finish("stopped", f"stopped on request after {self.evaluated} evaluated children")
        self._status(f"stopping: {self._reserved} in flight get {grace_s:g} s to finish")
        for task, phase in list(self._phase.items()):
            if phase != "evaluate" or grace_s <= 0:
                task.cancel()
        if grace_s > 0 and self._loop is not None:
            self._loop.call_later(grace_s, lambda: [t.cancel() for t in list(self._phase)])

    def _finish(self, outcome: str, message: str) -> None:
        """Record why the run ends (the first reason wins) and stop starting iterations."""
        self.state.finish(outcome, message)
        self._stopping = True
        self._running.set()
        self._notify()

    def _notify(self) -> None:
        self._change.set()
        self._change = asyncio.Event()

    # ---- the loop --------------------------------------------------------------------------
    async def _tracked(self, coro: Any) -> None:
        """Run ``coro`` as a task that Stop can cancel; a cancellation ends it quietly."""
        task = asyncio.create_task(coro)
        self._phase[task] = "evaluate"
        try:
            await task
        except asyncio.CancelledError:
            if not task.cancelled():
                raise
        finally:
            self._phase.pop(task, None)

    async def _run_slots(self) -> None:
        n = self.config.concurrency or len(self.evaluator.lanes) + (
            1 if self.mutator.name == "param" else 2)
        tasks = [asyncio.create_task(self._slot()) for _ in range(max(1, n))]
        for task in tasks:
            self._phase[task] = "idle"
        results = await asyncio.gather(*tasks, return_exceptions=True)
        for task in tasks:
            self._phase.pop(task, None)
        for r in results:
            if isinstance(r, Exception):
                raise r

    async def _slot(self) -> None:
        me = asyncio.current_task()
        assert me is not None
        while True:
            if not self._running.is_set():
                await self._running.wait()
            if self._stopping or self.evaluated >= self.config.iterations:
                return
            if self.evaluated + self._reserved >= self.config.iterations:
                await self._change.wait()  # a reserved iteration may yet fail and free its place
                continue
            self._reserved += 1
            try:
                await self._iteration(me)
            finally:
                self._reserved -= 1
                self._phase[me] = "idle"
                self._notify()

    async def _iteration(self, me: asyncio.Task[Any]) -> None:
        self._phase[me] = "mutate"
        cid = self.population.new_id()
        parent = self.population.select_parent(self.rng)
        items, advice, block = await self._retrieve_advice(cid, parent)
        mutation, parent = await self._mutate(cid, parent, block, self.state.take_hints(), items)
        if mutation.prompt and self.run_dir is not None:
            self.run_dir.write_llm_log(cid, mutation.prompt, mutation.reply)
        if mutation.failure_kind == EXHAUSTED:
            self._finish("exhausted", "the parameter search is exhausted: every setting of the "
                         "tunables has been tried (a model can take it further)")
            return
        source = mutation.source
        if source is not None and config_key(source) in self.state.tried:
            self.mutator.account.fail(DUPLICATE)
            mutation = Mutation(None, mutation.mutator, mutation.model, mutation.mode,
                                failure_kind=DUPLICATE,
                                failure="the answer is a program already evaluated")
        if source is None or not mutation.ok:
            self._mutation_failed(cid, parent, mutation)
            return
        self._failures_in_a_row = 0
        self.state.tried.add(config_key(source))
        shown = ([a["id"] for a in advice] if mutation.advice_ids is None
                 else list(mutation.advice_ids))
        child = Candidate(id=cid, source=source, parent_id=parent.id, island=parent.island,
                          generation=self.generation, mutator=mutation.mutator,
                          model=mutation.model, advice_ids=shown,
                          description=mutation.description, extra={"mode": mutation.mode})
        self._emit(ev.CandidateProposed(
            id=cid, parent_id=parent.id, island=child.island, generation=child.generation,
            mutator=child.mutator, model=child.model, description=child.description,
            diff=diff_text(parent.source, source, parent.id, cid),
            advice_ids=tuple(child.advice_ids), parent_origin=parent.copy_of or parent.id))
        self._phase[me] = "evaluate"
        result = await self._sanitized(child, await self._evaluate(child))
        improved = self._record(child, parent, result)
        generation_ends = self.evaluated % self._generation_size() == 0
        if child.advice_ids and self.memory is not None:
            try:
                await call(self.memory.record_outcome, list(child.advice_ids), improved)
            except Exception as e:
                self._status(f"advice library: recording the outcome failed: {e}", "warning")
        if generation_ends:
            await self._end_generation()

    def _generation_size(self) -> int:
        return self.config.generation_size or max(4, len(self.evaluator.lanes))

    async def _mutate(self, cid: str, parent: Candidate, advice: str, hints: list[str],
                      items: list[Any]) -> tuple[Mutation, Candidate]:
        """Ask the mutator for a child of ``parent``; when the parameters of that parent are
        exhausted, try the other accepted programs, best first."""
        def on_chunk(text: str) -> None:
            self._emit(ev.LLMChunk(cid, text))

        tried_parents = {parent.source}
        while True:
            request = MutationRequest(cid, parent, self._context(parent, advice, hints), self.rng,
                                      frozenset(self.state.tried), tuple(items))
            mutation = await self.mutator.propose(request, on_chunk)
            if mutation.failure_kind != EXHAUSTED:
                return mutation, parent
            others = [c for c in self.population.elites() + self.population.candidates()
                      if c.status == "accepted" and c.source not in tried_parents]
            if not others:
                return mutation, parent
            parent = others[0]
            tried_parents.add(parent.source)

    def _context(self, parent: Candidate, advice: str, hints: list[str]) -> PromptContext:
        if self.mutator.name == "param":  # no prompt: skip the diffs
            return PromptContext(self.task_source, parent)
        inspirations = [
            Inspiration(c.id, describe_metrics(c), c.description,
                        diff_text(parent.source, c.source, parent.id, c.id))
            for c in self.population.inspirations(parent, self.rng, self.config.inspirations)]
        return PromptContext(self.task_source, parent, inspirations, advice, hints,
                             parent.extra.get("last_failure"))

    async def _retrieve_advice(self, cid: str, parent: Candidate
                               ) -> tuple[list[Any], list[dict[str, Any]], str]:
        """Top-k advice for this parent: (the items for the mutator, views for events and
        lineage, the prompt block). The parameter mutator gets the advice it can follow
        (tunable moves) when the library can pick those."""
        if self.memory is None or self.config.memory_k <= 0:
            return [], [], ""
        fn = self.memory.retrieve
        if self.mutator.name == "param":
            fn = getattr(self.memory, "retrieve_tunables", fn)
        try:
            items = list(await call(fn, self.task.meta, parent.source, self.config.memory_k)
                         or [])[: self.config.memory_k]
            views = [advice_view(a) for a in items]
        except Exception as e:
            self._status(f"advice library: retrieval failed ({type(e).__name__}: {e}); "
                         "continuing without advice", "warning")
            return [], [], ""
        if views:
            self._emit(ev.AdviceRetrieved(cid, tuple(views)))
        block = "" if self.mutator.name == "param" else advice_block(items, views)
        return items, views, block

    def _mutation_failed(self, cid: str, parent: Candidate, m: Mutation) -> None:
        self._failures_in_a_row += 1
        kind = m.failure_kind or "unknown"
        if kind in EXTRACTION_KINDS or kind == DUPLICATE:  # tell the model in the next prompt
            parent.extra["last_failure"] = {"id": cid, "reason": f"unusable answer ({kind})",
                                            "message": m.failure or kind}
        self._status(f"{cid}: {m.mutator} mutation of {parent.id} failed ({kind}): {m.failure}",
                     "warning")
        limit = 3 if kind in ("server_down", "model_missing") else self.config.max_consecutive_failures
        if self._failures_in_a_row >= limit:
            self._finish("failed", f"the {m.mutator} mutator failed {self._failures_in_a_row} "
                         f"times in a row; last ({kind}): {m.failure}")

    async def _evaluate(self, c: Candidate) -> EvalResult:
        """Evaluate ``c``; an evaluator failure (not the candidate's fault) is retried once,
        and a run whose evaluator keeps failing ends."""
        request = EvalRequest(task=self.task, source=c.source, name=c.id,
                              trials=self.config.eval_trials, timeout_s=self.config.eval_timeout_s,
                              slow_cutoff_ms=self._slow_cutoff_ms(c))
        result = await self.evaluator.aevaluate(request)
        if result.reason == reasons.HARNESS_ERROR:
            self._status(f"{c.id}: the evaluator failed ({result.message}); trying again",
                         "warning")
            result = await self.evaluator.aevaluate(request)
        if result.reason != reasons.HARNESS_ERROR:
            self._harness_errors_in_a_row = 0
            return result
        self._harness_errors_in_a_row += 1
        if self._harness_errors_in_a_row >= self.config.max_harness_errors:
            self._finish("failed", f"the evaluator failed {self._harness_errors_in_a_row} times "
                         f"in a row (not the candidates' fault): {result.message}")
        return result

    def _slow_cutoff_ms(self, c: Candidate) -> float | None:
        best = self.best
        if (c.mutator == "seed" or best is None or not best.time_ms or not self.config.slow_cutoff_factor
                or best.extra.get("interpreter")):
            return None
        return self.config.slow_cutoff_factor * best.time_ms

    async def _sanitized(self, c: Candidate, r: EvalResult) -> EvalResult:
        """compute-sanitizer on each would-be new best, where the evaluator offers it (CUDA C
        candidates on a machine that has the tool): a memory error rejects the candidate."""
        sanitize = getattr(self.evaluator, "asanitize", None)
        best = self.best
        if sanitize is None or not r.accepted:
            return r
        if best is not None:
            probe = Candidate(id=c.id, source=c.source, time_ms=r.time_ms,
                              extra={"spread_pct": r.spread_pct})
            if not self.state.beats(probe, best):
                return r
        try:
            report = await sanitize(self.task, c.source)
        except Exception as e:  # the tool failing is not the candidate's fault
            self._status(f"{c.id}: compute-sanitizer failed ({type(e).__name__}: {e})", "warning")
            return r
        if report is None:
            return r
        if not report.ran:
            self._status(f"{c.id}: compute-sanitizer did not run: {report.message}", "warning")
            return r
        if report.ok:
            self._status(f"{c.id}: compute-sanitizer: no errors ({report.seconds:.0f} s)")
            return r
        return replace(r, accepted=False, reason=reasons.SANITIZER_ERROR, message=report.message)

    async def _evaluate_seed(self) -> None:
        assert self._seed_source is not None
        seed = Candidate(id=self.population.new_id(), source=self._seed_source, mutator="seed",
                         description="seed")
        self._emit(ev.CandidateProposed(id=seed.id, parent_id=None, island=0, generation=0,
                                        mutator="seed", model=None, description="seed", diff=""))
        self._status(f"evaluating the seed {seed.id} on {', '.join(self.evaluator.devices)}"
                     + (" (Triton interpreter)" if self.evaluator.is_cpu else ""))
        result = await self._sanitized(seed, await self._evaluate(seed))
        self.state.seed_id = seed.id
        self._record(seed, None, result)
        if not result.accepted:
            msg = f"the seed candidate was rejected ({result.reason}): {result.message}"
            self._status(msg, "error")
            self._finish("failed", msg)
            return
        await self._checkpoint()

    def _record(self, c: Candidate, parent: Candidate | None, r: EvalResult) -> bool:
        """Store a verdict and announce it; returns whether the child beat its parent."""
        verdict = self.state.record(c, parent, r)
        self._emit(ev.CandidateEvaluated(
            id=c.id, accepted=r.accepted, reason=r.reason, message=r.message, time_ms=r.time_ms,
            spread_pct=r.spread_pct, speedup_eager=r.speedup_eager,
            speedup_compile=r.speedup_compile, roofline_pct=r.roofline_pct,
            interpreter=r.interpreter, wall_s=r.wall_s, parent_id=c.parent_id,
            new_best=verdict.new_best, improved=verdict.improved))
        return verdict.improved

    async def _end_generation(self) -> None:
        self.state.generation += 1
        migrants = self.population.maybe_migrate(self.generation, self.rng,
                                                 self.config.migration_interval)
        if migrants:
            self._status("migration: " + ", ".join(f"{m.copy_of}→island {m.island}"
                                                   for m in migrants))
        best, acc = self.best, self.account()
        children = self.state.children()
        n_acc = sum(c.status == "accepted" for c in children)
        self._emit(ev.GenerationDone(
            generation=self.generation, evaluated=self.evaluated, accepted=n_acc,
            rejected=len(children) - n_acc, best_id=self.best_id,
            best_time_ms=best.time_ms if best else None,
            best_speedup_eager=best.speedup_eager if best else None,
            best_speedup_compile=best.speedup_compile if best else None,
            best_roofline_pct=best.roofline_pct if best else None,
            evals_per_minute=self.evals_per_minute(), llm_calls=acc["calls"],
            llm_failures=acc["failures"], prompt_tokens=acc["prompt_tokens"],
            completion_tokens=acc["completion_tokens"]))
        await self._checkpoint()

    async def _distill(self) -> None:
        """Successful mutations → proposed advice (``evotui.engine.distillation``). A Stop
        during it cancels it; what was stored by then stays."""
        from evotui.engine import distillation

        task = asyncio.create_task(distillation.after_run(self))
        self._phase[task] = "distill"
        try:
            self.advice_report = await task
        except asyncio.CancelledError:
            if not task.cancelled():
                raise
            self.advice_report = distillation.off("cancelled by a stop request")
        except Exception as e:  # never lose the report over the advice library
            self.advice_report = distillation.off(f"failed: {type(e).__name__}: {e}")
        finally:
            self._phase.pop(task, None)
        r = self.advice_report
        if r.get("distilled") and (r.get("eligible") or r.get("proposed") or r.get("merged")):
            where = " (CPU interpreter: wall times, kept proposed)" if r.get("interpreter") else ""
            self._status(f"advice: {r['proposed']} proposed, {r['merged']} merged into existing "
                         f"advice from {r['eligible']} mutations over "
                         f"{r['min_gain'] * 100:.0f} %{where}")
        elif not r.get("distilled") and str(r.get("why", "")).startswith(("failed", "cancelled")):
            self._status(f"advice distillation {r['why']}", "warning")

    # ---- checkpoints -----------------------------------------------------------------------
    def checkpoint_data(self) -> dict[str, Any]:
        """A consistent snapshot: candidates in flight are left out (a resume redoes them)."""
        return {
            **self.state.to_dict(self.elapsed()),
            "run": self.run_info,
            "task": str(self.task.path),
            "mutator": {"name": self.mutator.name, "model": self.mutator.model,
                        "state": self.mutator.state(), "account": self.account()},
            "events_offset": self.run_dir.events_offset() if self.run_dir else 0,
            "written": time.time(),
            "seq": next(self._checkpoint_seq),  # which of two overlapping writes is newer
        }

    async def _checkpoint(self) -> None:
        if self.run_dir is None:
            return
        async with self._ckpt_lock:
            data = self.checkpoint_data()
            # A Stop can cancel this task while the thread still writes; the final checkpoint
            # then overlaps it: RunDir serialises the two and keeps the newer (its ``seq``).
            await asyncio.to_thread(self.run_dir.write_checkpoint, data)

    def _restore(self, ck: dict[str, Any]) -> None:
        self.state = RunState.from_dict(ck, self.config)
        mut = ck.get("mutator") or {}
        self.mutator.load_state({**(mut.get("state") or {}), "account": mut.get("account") or {}})
        if self.run_dir is not None:
            self.run_dir.truncate_events(int(ck.get("events_offset", 0)))
            self.run_dir.truncate_sources(ck.get("sources_offset"))

    async def _cancel_all(self) -> None:
        tasks = [t for t in self._phase if not t.done()]
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _write_final(self) -> dict[str, Any]:
        """Report and best.py, then RunFinished, then the last checkpoint (which so covers
        the whole log)."""
        report = self.report()
        finished = ev.RunFinished(outcome=self.outcome or "stopped", message=self.outcome_message,
                                  evaluated=self.evaluated, best_id=self.best_id,
                                  run_dir=str(self.run_dir.path) if self.run_dir else None)
        if self.run_dir is None:
            self._emit(finished)
            return report
        try:
            async with self._ckpt_lock:
                self.run_dir.write_report(report, reporting.render_markdown(report))
                best = self.best
                if best is not None:
                    self.run_dir.write_best(reporting.best_file(report, best.source))
                self._emit(finished)
                if self.best_id is not None:  # an accepted seed: something to resume from
                    self.run_dir.write_checkpoint(self.checkpoint_data())
        except OSError as e:
            self._status(f"cannot write the run directory {self.run_dir.path}: {e}", "error")
        return report

