"""An A/B on the candidate side (a part of ``CandidateRunner``): two candidates timed in
alternation on the same input sets, each output dumped for the judge."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import evotui.eval.outbox as outbox
from evotui.core import reasons
from evotui.eval.control import ALONE
from evotui.eval.failures import CandidateFailure
from evotui.eval.messages import ABReport, Request
from evotui.eval.timed_calls import TimedCalls, as_outputs
from evotui.task.model import make_init_inputs


class ABPhase:
    def compare(self, req: Request) -> ABReport:
        """Interleaved A/B timing of already-accepted candidates on the same inputs, watched
        like an evaluation's timing: the first call of each poisoned and under the op policy
        (as a trial is), a random share of the samples and the last call under the policy
        (a candidate that knew it was being compared could return torch's answer)."""
        if self.timer is None:
            return ABReport.failed(reasons.HARNESS_ERROR, "A/B timing needs a GPU")
        self._release_previous()
        torch = self.torch
        task = self._task(req.task, req.task_sha256)
        shape = req.shapes[0]
        # as in an evaluation's timing: each model's calls rotate over input sets, whose
        # values all change before every call (evotui.eval.perturb)
        seeds, sets = self._timing_inputs(req, task, shape)
        inputs = sets[0]
        scratch = Path(req.scratch)
        try:
            models = []
            for path in req.candidates:
                cls = self._load_model_class(path, task, req.static_checks)
                torch.manual_seed(req.init_seed)
                models.append(cls(*make_init_inputs(task, shape)).to(self.device))
            if req.gate and outbox.has_channel():
                outbox.ask_gate(ALONE)  # every call from here on is timed
            last: list[Any] = [None] * len(models)
            allow = req.allow_torch
            violations: dict[str, int] = {}
            watched = self._watcher(allow, violations)

            # as an evaluation's timed calls (evotui.eval.timed_calls), per model; in a round
            # both models see the same set, each after its own change of all its values
            changes = [0] * len(sets)
            runs = [TimedCalls(model, sets, seeds, judge_every_call=False,
                               audit_seed=req.timing_seed + k, changes=changes,
                               dump=lambda values, prefix, k=k: self._dump(values, scratch,
                                                                          f"ab{k}_{prefix}"),
                               refill=lambda values, seed: self._refill(values, task, shape, seed))
                    for k, model in enumerate(models)]
            first = self._watcher(allow, violations, poison=True)
            for run in runs:  # not a prepared call: left out of the audit
                first(run.call)
            timings = self.timer.interleaved([run.call for run in runs], watch=watched,
                                             prepare=lambda k: runs[k].prepare(),
                                             rng=random.Random(req.timing_seed))
            judged = [run.finish() for run in runs]
            # new values in the same tensors, then one more call each: the result must be
            # for these values (a candidate cannot replay while it is being compared)
            self._refill(inputs, task, shape, req.recheck_seed)
            for k, model in enumerate(models):
                runs[k].out = None

                def final(k: int = k, model: Any = model) -> None:
                    last[k] = model(*inputs)
                watched(final)
            torch.cuda.synchronize(self.device)
        except CandidateFailure as f:
            return ABReport.failed(f.reason, f.message, f.restart)
        except BaseException as e:  # noqa: BLE001
            healthy = self._cuda_healthy()
            return ABReport.failed(reasons.RUNTIME_ERROR if healthy else reasons.CUDA_ERROR,
                                   f"during A/B timing: {type(e).__name__}: {e}"[:2000],
                                   not healthy)
        outputs = tuple(tuple(self._dump(as_outputs(out), scratch, f"ab{k}"))
                        for k, out in enumerate(last))
        return ABReport(ok=True, seed=req.recheck_seed, timings=tuple(timings), outputs=outputs,
                        audited=tuple(j.audited for j in judged),
                        weights_changed=tuple(j.weights_changed for j in judged),
                        watched_policy=violations)
