"""Generation 0 written by the model, for a run with no seed: the model gets the task's
reference (and what the judge checks) and writes a whole ``ModelNew``; every failure — an
answer with no usable program, a static-rule rejection, a compile error, a mismatch with
its worst elements, a torch fallback, a timeout — goes back to it in the next prompt, until
a candidate is accepted (it becomes the seed, and evolution goes on as usual) or
``config.seed_attempts`` answers are spent (the run fails, saying why).

Each evaluated attempt is a candidate of generation 0 with no parent (``mutator="seed"``,
its model named), announced with the usual events; a status line says which attempt is
being written, so the TUI and the headless output show generation 0 being written.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import replace

from evotui.engine import events as ev
from evotui.engine.advice import AdviceLink
from evotui.engine.context import Emit, Finish, RunTask
from evotui.engine.evaluating import EvalStep
from evotui.engine.inflight import InFlight
from evotui.engine.mutators import DUPLICATE, UNAVAILABLE, LLMMutator, Mutation, Mutator
from evotui.engine.population import Candidate
from evotui.engine.prompting import SeedAttempt, SeedContext
from evotui.engine.proposing import base_temperature
from evotui.engine.rundir import RunDir
from evotui.engine.state import EngineConfig, RunState
from evotui.engine.steering import Steering
from evotui.engine.tunables import config_key
from evotui.eval.results import EvalResult

Record = Callable[[Candidate, Candidate | None, EvalResult], bool]  # store and announce a verdict

GIVE_UP_AFTER_OUTAGES = 2  # the server or model missing this many times in a row: stop


def can_write_seed(mutator: Mutator) -> bool:
    return mutator.model_side() is not None


class SeedWriter:
    def __init__(self, mutator: Mutator, task: RunTask, config: EngineConfig, state: RunState,
                 run_dir: RunDir | None, *, advice: AdviceLink, evaluator: EvalStep,
                 inflight: InFlight, record: Record, save: Callable[[], Awaitable[None]],
                 emit: Emit, finish: Finish) -> None:
        self.mutator, self.task, self.config, self.state = mutator, task, config, state
        self.run_dir = run_dir  # the prompts and answers are logged there
        self._advice, self._eval, self._inflight = advice, evaluator, inflight
        self._record = record
        self._save = save  # a checkpoint: a resume goes on from the attempts so far
        self._emit = emit
        self._finish = finish
        # a resumed run goes on from the attempts its checkpoint holds
        self.attempts: list[SeedAttempt] = [
            SeedAttempt(c.id, int(c.extra.get("attempt", i + 1)), c.reason or "rejected",
                        c.message or "", c.source)
            for i, c in enumerate(c for c in state.population.candidates()
                                  if c.mutator == "seed" and c.status == "rejected"
                                  and c.extra.get("written_by") == "model")]
        self.steering = Steering(base_temperature(mutator))

    def _status(self, message: str, level: str = "info") -> None:
        self._emit(ev.Status(message, level))

    async def run(self) -> Candidate | None:
        """Ask until a candidate is accepted (returned, recorded as the seed) or the budget
        is spent (the run is finished as failed)."""
        state = self.state
        writer = self.mutator.model_side()
        assert writer is not None, "a run without a seed needs a model"
        budget = max(1, self.config.seed_attempts)
        outages = 0
        for n in range(len(self.attempts) + 1, budget + 1):
            if state.outcome is not None:  # a stop request
                return None
            cid = state.population.new_id()
            self._status(f"writing generation 0 from the reference with {writer.model} "
                         f"(attempt {n} of {budget})")
            mutation = await self._ask(writer, cid)
            if mutation.failure_kind in UNAVAILABLE:
                outages += 1
                self._failed(cid, n, f"the model failed ({mutation.failure_kind})",
                             mutation.failure or "", None)
                if outages >= GIVE_UP_AFTER_OUTAGES or mutation.failure_kind in (
                        "server_down", "model_missing"):
                    break
                continue
            outages = 0
            if mutation.source is None:
                self._failed(cid, n, f"unusable answer ({mutation.failure_kind})",
                             mutation.failure or "", None, mutation.failure_kind)
                continue
            mutation = replace(mutation, key=config_key(mutation.source))
            pop = state.population  # an attempt with a program is an evaluated candidate
            earlier = next((a for a in self.attempts if a.id in pop
                            and pop.get(a.id).config_key == mutation.key), None)
            if earlier is not None:
                self._failed(cid, n, "the same program again",
                             f"this is the program of {earlier.id}, which failed: "
                             f"{earlier.reason}: {earlier.message}", None, DUPLICATE)
                continue
            seed = await self._evaluate(cid, n, writer, mutation)
            if seed is not None:
                return seed
        last = self.attempts[-1] if self.attempts else None
        why = f"{last.reason}: {_first_line(last.message)}" if last else "no answer"
        msg = f"no accepted generation 0 after {len(self.attempts)} attempts: {why}"
        self._status(msg, "error")
        self._finish("failed", msg)
        return None

    async def _ask(self, writer: LLMMutator, cid: str) -> Mutation:
        pop = self.state.population  # the last attempt's program, when it was evaluated
        last = self.attempts[-1].id if self.attempts else None
        shown = pop.get(last) if last in pop else Candidate(id=cid, source="")
        advice = await self._advice.retrieve(cid, shown, False)
        steer = self.steering.steer([f"{a.id}: {a.reason}" for a in self.attempts])
        ctx = SeedContext(self.task.source, self.task.facts, list(self.attempts), advice.block,
                          self.state.take_hints(), steer)
        messages = writer.builder.seed_messages(ctx)
        mutation = await writer.ask(messages, "", "full",
                                    lambda text: self._emit(ev.LLMChunk(cid, text)),
                                    steer.temperature if steer else None)
        if self.run_dir is not None and mutation.prompt:
            self.run_dir.write_llm_log(cid, mutation.prompt, mutation.reply)
        return mutation

    async def _evaluate(self, cid: str, n: int, writer: LLMMutator,
                        mutation: Mutation) -> Candidate | None:
        assert mutation.source is not None
        what = f"generation 0 by {writer.model}, attempt {n}"
        description = f"{what}: {mutation.description}" if mutation.description else what
        seed = Candidate(id=cid, source=mutation.source, mutator="seed", model=writer.model,
                         description=description, extra={"mode": "full", "written_by": "model",
                                "attempt": n}, config_key=mutation.key)
        self._emit(ev.CandidateProposed(id=cid, parent_id=None, island=0, generation=0,
                                        mutator="seed", model=writer.model,
                                        description=description, diff=""))
        self._inflight.set_phase("evaluate")
        result = await self._eval.evaluate(seed)
        self._inflight.set_phase("mutate")
        self._record(seed, None, result)
        if result.accepted:
            self.state.seed_id = seed.id
            self.steering.succeeded()
            self._status(f"generation 0 accepted: {cid} (attempt {n})")
            await self._save()
            return seed
        self._failed(cid, n, result.reason, result.message, mutation.source)
        await self._save()  # a resume goes on from this attempt
        return None

    def _failed(self, cid: str, n: int, reason: str, message: str, source: str | None,
                kind: str | None = None) -> None:
        self.attempts.append(SeedAttempt(cid, n, reason, message, source))
        if kind is not None:  # an answer with no new program: repeats steer the next prompt
            self.steering.failed(kind, reason)
        self._status(f"{cid}: generation 0 attempt {n} failed ({reason}): "
                     f"{_first_line(message)}", "warning")


def _first_line(text: str, limit: int = 200) -> str:
    line = next((x.strip() for x in str(text).splitlines() if x.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


__all__ = ["SeedWriter", "can_write_seed"]
