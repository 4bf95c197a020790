"""From a parent to a proposed child: the mutator's request (prompt context, advice, hints,
what the judge checks), the switch to other parents when one's parameters are exhausted,
duplicate answers, the steering of a model that repeats itself (``steering``), and the
streak of failed mutations that ends a run.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from evotui.engine import events as ev
from evotui.engine.context import Emit, Finish, RunTask
from evotui.engine.mutators import (
    DUPLICATE,
    EXHAUSTED,
    EXTRACTION_KINDS,
    Mutation,
    MutationRequest,
    Mutator,
)
from evotui.engine.patch import diff_text
from evotui.engine.population import Candidate
from evotui.engine.prompting import Inspiration, PromptContext, describe_metrics
from evotui.engine.state import EngineConfig, RunState
from evotui.engine.steering import Steer, Steering
from evotui.engine.tunables import config_key


class Proposer:
    def __init__(self, mutator: Mutator, task: RunTask, config: EngineConfig, state: RunState,
                 emit: Emit, finish: Finish) -> None:
        self.mutator = mutator
        self.task = task
        self.config = config
        self.state = state  # population, rng, tried programs, generation
        self._emit = emit
        self._finish = finish  # (outcome, message): ends the run
        self._failures_in_a_row = 0
        self.steering = Steering(base_temperature(mutator))
        self._steered_at = 0  # the streak last announced

    async def propose(self, cid: str, parent: Candidate, advice: str, hints: list[str],
                      items: list[Any]) -> tuple[Mutation, Candidate]:
        """Ask the mutator for a child of ``parent``; when the parameters of that parent are
        exhausted, try the other accepted programs, best first. Returns the mutation and the
        parent it was made from."""
        def on_chunk(text: str) -> None:
            self._emit(ev.LLMChunk(cid, text))

        state, pop = self.state, self.state.population
        tried_parents = {parent.source}
        while True:
            steer = self._steer(parent)
            request = MutationRequest(cid, parent, self._context(parent, advice, hints, steer),
                                      state.rng, frozenset(state.tried), tuple(items),
                                      steer.temperature if steer else None)
            mutation = await self.mutator.propose(request, on_chunk)
            if mutation.failure_kind != EXHAUSTED:
                return mutation, parent
            others = [c for c in pop.elites() + pop.candidates()
                      if c.status == "accepted" and c.source not in tried_parents]
            if not others:
                return mutation, parent
            parent = others[0]
            tried_parents.add(parent.source)

    def _steer(self, parent: Candidate) -> Steer | None:
        """The nudge for a model that keeps repeating itself (none for the parameters)."""
        if self.mutator.name == "param":
            return None
        tried = [c.description for c in self.state.population.candidates()
                 if c.parent_id == parent.id and c.description and c.copy_of is None
                 and c.mutator != "seed"]
        steer = self.steering.steer(tried)
        if steer is not None and steer.streak != self._steered_at:
            self._steered_at = steer.streak
            self._emit(ev.Status(
                f"the model repeated itself {steer.streak} times in a row: the next prompt "
                f"lists what was tried and asks for another kind of change (temperature "
                f"{steer.temperature:g})"))
        return steer

    def _context(self, parent: Candidate, advice: str, hints: list[str],
                 steer: Steer | None = None) -> PromptContext:
        task = self.task
        if self.mutator.name == "param":  # no prompt: skip the diffs
            return PromptContext(task.source, parent)
        inspirations = [
            Inspiration(c.id, describe_metrics(c), c.description,
                        diff_text(parent.source, c.source, parent.id, c.id))
            for c in self.state.population.inspirations(parent, self.state.rng,
                                                        self.config.inspirations)]
        return PromptContext(task.source, parent, inspirations, advice, hints,
                             parent.extra.get("last_failure"), task.facts, steer)

    def reject_duplicate(self, mutation: Mutation) -> Mutation:
        """``mutation`` with its program's config key (computed here unless the mutator
        carried it), or a failed one when that program was already evaluated or is in
        flight."""
        if mutation.source is None:
            return mutation
        if not mutation.key:
            mutation = replace(mutation, key=config_key(mutation.source))
        if mutation.key not in self.state.tried:
            return mutation
        self.mutator.account.fail(DUPLICATE)
        return Mutation(None, mutation.mutator, mutation.model, mutation.mode,
                        description=mutation.description, failure_kind=DUPLICATE,
                        failure="the answer is a program already evaluated",
                        prompt=mutation.prompt, reply=mutation.reply)

    def failed(self, cid: str, parent: Candidate, m: Mutation) -> None:
        """A mutation without a child; enough of them in a row end the run."""
        self._failures_in_a_row += 1
        kind = m.failure_kind or "unknown"
        self.steering.failed(kind, m.description)
        if kind in EXTRACTION_KINDS or kind == DUPLICATE:  # tell the model in the next prompt
            parent.extra["last_failure"] = {"id": cid, "reason": f"unusable answer ({kind})",
                                            "message": m.failure or kind}
        self._emit(ev.Status(
            f"{cid}: {m.mutator} mutation of {parent.id} failed ({kind}): {m.failure}", "warning"))
        limit = (3 if kind in ("server_down", "model_missing")
                 else self.config.max_consecutive_failures)
        if self._failures_in_a_row >= limit:
            self._give_up(kind, f"the {m.mutator} mutator failed {self._failures_in_a_row} "
                          f"times in a row; last ({kind}): {m.failure}")

    def _give_up(self, kind: str, message: str) -> None:
        """Too many failed mutations in a row. A model that keeps repeating itself or answering
        without usable code has nothing more to give, but the run has a best kernel: it ends
        cleanly with the best kept. An unreachable server or a missing model is a failure."""
        best = self.state.best
        if (kind == DUPLICATE or kind in EXTRACTION_KINDS) and best is not None:
            self._finish("exhausted", f"the model stopped giving new programs ({message}); "
                         f"the best, {best.id}, is kept")
        else:
            self._finish("failed", message)

    def child(self, cid: str, parent: Candidate, m: Mutation,
              advice_views: list[dict[str, Any]]) -> Candidate:
        """The child of a successful mutation, its program now marked as tried. Its advice ids
        are those the mutator says it followed, or else all the advice shown."""
        assert m.source is not None
        self._failures_in_a_row = 0
        self.steering.succeeded()
        self._steered_at = 0
        shown = ([a["id"] for a in advice_views] if m.advice_ids is None
                 else list(m.advice_ids))
        child = Candidate(id=cid, source=m.source, parent_id=parent.id, island=parent.island,
                          generation=self.state.generation, mutator=m.mutator, model=m.model,
                          advice_ids=shown, description=m.description, extra={"mode": m.mode},
                          config_key=m.key)
        self.state.tried.add(child.config_key)
        return child


def base_temperature(mutator: Mutator) -> float:
    """The model's configured temperature (Ollama's default, 0.8, when none is set)."""
    side = mutator.model_side()
    options = side.llm.options if side is not None else None
    value = options.get("temperature") if isinstance(options, dict) else None
    return float(value) if isinstance(value, int | float) else 0.8
