"""Evaluating one candidate for the engine: the request to the evaluator, one retry when the
evaluator itself fails, and compute-sanitizer on a would-be new best.

The verdict comes from the evaluator (DESIGN §1, invariant 2); this only decides what to ask
for and when a run whose evaluator keeps failing must end.
"""

from __future__ import annotations

from dataclasses import replace

from evotui.core import reasons
from evotui.engine import events as ev
from evotui.engine.context import Emit, Finish
from evotui.engine.hooks import Evaluator
from evotui.engine.population import Candidate
from evotui.engine.state import EngineConfig, RunState
from evotui.engine.timeouts import explain_timeout
from evotui.eval.results import EvalRequest, EvalResult
from evotui.task.model import TaskRef


class EvalStep:
    def __init__(self, evaluator: Evaluator, task: TaskRef, config: EngineConfig,
                 state: RunState, emit: Emit, finish: Finish) -> None:
        self.evaluator = evaluator
        self.task = task
        self.config = config
        self.state = state  # the best so far: the slow cutoff, and who sanitizer checks
        self._emit = emit
        self._finish = finish  # (outcome, message): ends the run
        self._harness_errors_in_a_row = 0
        self.seed_wall_s: float | None = None  # an accepted seed's evaluation, this process

    def _status(self, message: str, level: str = "info") -> None:
        self._emit(ev.Status(message, level))

    async def evaluate(self, c: Candidate) -> EvalResult:
        """The evaluator's verdict on ``c``, after compute-sanitizer where that applies."""
        return await self._sanitized(c, await self._evaluate(c))

    async def _evaluate(self, c: Candidate) -> EvalResult:
        """Evaluate ``c``; an evaluator failure (not the candidate's fault) is retried once,
        and a run whose evaluator keeps failing ends."""
        config, evaluator = self.config, self.evaluator
        request = EvalRequest(task=self.task, source=c.source, name=c.id,
                              trials=config.eval_trials, timeout_s=config.eval_timeout_s,
                              slow_cutoff_ms=self._slow_cutoff_ms(c))
        result = self._explained(c, await evaluator.aevaluate(request))
        if result.reason == reasons.HARNESS_ERROR:
            self._status(f"{c.id}: the evaluator failed ({result.message}); trying again",
                         "warning")
            result = self._explained(c, await evaluator.aevaluate(request))
        if result.reason != reasons.HARNESS_ERROR:
            self._harness_errors_in_a_row = 0
            return result
        self._harness_errors_in_a_row += 1
        if self._harness_errors_in_a_row >= config.max_harness_errors:
            self._finish("failed", f"the evaluator failed {self._harness_errors_in_a_row} times "
                         f"in a row (not the candidates' fault): {result.message}")
        return result

    def _explained(self, c: Candidate, r: EvalResult) -> EvalResult:
        """A timeout says whether the task is too big or the candidate too slow; an
        accepted seed's evaluation time is the yardstick."""
        if c.mutator == "seed" and r.accepted:
            self.seed_wall_s = r.wall_s
        if r.reason != reasons.TIMEOUT:
            return r
        device = "the CPU interpreter" if self.evaluator.is_cpu else "the GPU"
        shape = self.task.shapes("cpu" if self.evaluator.is_cpu else "cuda")[0]
        return replace(r, message=explain_timeout(
            r.message, is_seed=c.mutator == "seed", seed_wall_s=self.seed_wall_s,
            timeout_s=self.config.eval_timeout_s, device=device, shape=shape))

    def _slow_cutoff_ms(self, c: Candidate) -> float | None:
        best, factor = self.state.best, self.config.slow_cutoff_factor
        if (c.mutator == "seed" or best is None or not best.metrics.time_ms or not factor
                or best.metrics.interpreter):
            return None
        return factor * best.metrics.time_ms

    async def _sanitized(self, c: Candidate, r: EvalResult) -> EvalResult:
        """compute-sanitizer on each would-be new best, where the evaluator offers it (CUDA C
        candidates on a machine that has the tool): a memory error rejects the candidate."""
        best = self.state.best
        if not r.accepted:
            return r
        if best is not None and not self.state.beats(r.metrics, best.metrics):
            return r
        try:
            report = await self.evaluator.asanitize(self.task, c.source)
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
