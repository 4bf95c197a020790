"""The timed phase of an evaluation, on the candidate side (a part of ``CandidateRunner``):
the timed calls over the input sets, what is dumped of them for the judge, the rechecks on
new values, and the value-cache guard."""

from __future__ import annotations

import random
import time
from typing import Any

import evotui.eval.outbox as outbox
from evotui.eval.control import ALONE, SHARE
from evotui.eval.messages import Checked, Request, SetAfter, TimingReport
from evotui.eval.op_policy import OpPolicy
from evotui.eval.perturb import graph_check_seed
from evotui.eval.timed_calls import TimedCalls, ValueRounds, as_outputs


class TimedPhase:
    def _time(self, req: Request, run, model_for, task, shapes, scratch, allow,
              phases: dict[str, float]) -> TimingReport:
        torch = self.torch
        # Parts of "timing", in seconds, as "timing:PART": where a candidate holds the device
        clock = time.perf_counter()

        def lap(part: str) -> None:
            nonlocal clock
            now = time.perf_counter()
            phases[f"timing:{part}"] = phases.get(f"timing:{part}", 0.0) + now - clock
            clock = now

        # Timed calls rotate over separately allocated input sets: placement effects average
        # out within a run (steadier across runs) and no call sees the previous call's tensors.
        seeds, sets = self._timing_inputs(req, task, shapes[0])
        model = model_for(0)
        calls = TimedCalls(model, sets, seeds, judge_every_call=self.timer is None,
                           audit_seed=req.timing_seed,
                           dump=lambda values, prefix: self._dump(values, scratch, prefix),
                           refill=lambda values, seed: self._refill(values, task, shapes[0], seed))
        watched_ops: dict[str, int] = {}
        watched = self._watcher(allow, watched_ops)
        self.recorder.reset()
        lap("sets")
        gated = req.gate and outbox.has_channel()
        if gated:  # the timed calls and the value-cache guard have the device alone
            outbox.ask_gate(ALONE)
        lap("alone_wait")
        try:
            if self.timer is not None:
                timing = self.timer.time(calls.call, watch=watched, rng=random.Random(seeds[0]),
                                         slow_cutoff_ms=req.slow_cutoff_ms,
                                         input_set=calls.next_set, prepare=calls.prepare,
                                         input_sets=len(sets))
            else:
                from evotui.eval.wall_timing import time_interpreter

                # every one watched: the interpreter's wall time ranks candidates on the CPU,
                # and with no watched call a candidate that tells the timed calls apart from
                # the checked ones (fresh tensors, unpoisoned memory, its kernels run) could
                # return torch's answer in exactly those
                timing = time_interpreter(lambda: watched(calls.call), prepare=calls.prepare)
        except BaseException as e:  # noqa: BLE001
            raise self._failure(e, req.candidate, "while timing: ") from None
        lap("timer")
        timing_launches = self.recorder.total
        judged = calls.finish()
        if self.device.type == "cuda":
            torch.cuda.synchronize(self.device)
        timed_outputs = self._dump(as_outputs(calls.out), scratch, "timed_out")
        lap("outputs")
        inputs_after = [(s, calls.perturbed[k], self._inputs_after(inp, scratch, f"timed_in{k}"))
                        for k, (s, inp) in enumerate(zip(seeds, sets, strict=True))]
        self._settle_inputs()  # before the calls below change the sets' values again
        lap("fingerprints")
        graph_replay = None
        if timing.method == "graph":
            # the replayed calls ran without new values between them: once more on new values
            # in the same tensors, and the judge checks that answer (a kernel that skipped its
            # work on replays would still hold the old one)
            seed = graph_check_seed(req.recheck_seed)
            for values in sets:
                self._refill(values, task, shapes[0], seed)
            if self.timer is not None and self.timer.replay_timed_graph():
                graph_replay = Checked(seed, tuple(self._dump(as_outputs(calls.out), scratch,
                                                              "graph_out")))
        inputs = sets[calls.last]
        calls.out = None
        lap("graph_replay")
        fresh_check = self._fresh_vs_same(model, calls, task, shapes[0], req)
        lap("fresh_vs_same")
        if gated:  # the checks that follow are not timed: beside others' checks again
            outbox.ask_gate(SHARE)
        # New values in the same tensors: a cache keyed on pointers or shapes now returns
        # a stale result. Then fresh tensors: whatever comes after timing must still be right.
        self._refill(inputs, task, shapes[0], req.recheck_seed)
        # no poisoning here: the recheck must look exactly like a timed call (a candidate
        # that probes torch.empty for 0xFF could otherwise tell it apart and stop caching)
        recheck_policy = OpPolicy(allow)
        recheck_outs, steady_launches = self._guarded_call(model, inputs, recheck_policy,
                                                           req.candidate)
        recheck = self._dump(recheck_outs, scratch, "recheck_out")
        del recheck_outs
        verify_policy = OpPolicy(allow, poison=True)
        _, vouts, _ = run(0, req.verify_seed, verify_policy)
        verified = tuple(self._dump(vouts, scratch, "verify_out"))
        lap("rechecks")
        return TimingReport(
            **timing.as_dict(), seed=calls.saw[0], perturbed=calls.saw[1], calls=calls.calls,
            launches=timing_launches, launches_per_call=steady_launches,
            watched_policy={**watched_ops, **recheck_policy.violations,
                            **verify_policy.violations},
            recheck=Checked(req.recheck_seed, tuple(recheck)), graph_replay=graph_replay,
            fresh_check=fresh_check, outputs=tuple(timed_outputs),
            earlier_outputs=judged.earlier_outputs, audited=judged.audited,
            weights_changed=judged.weights_changed,
            inputs_after=tuple(SetAfter(s, n, tuple(inputs)) for s, n, inputs in inputs_after),
            verify=Checked(req.verify_seed, verified))

    def _fresh_vs_same(self, model, calls: TimedCalls, task, shape, req) -> Any:
        """Calls on new values vs calls on the same values written again, and on those with
        one element changed, rotating over the timed input sets
        (evotui.eval.timed_calls.ValueRounds). Its outputs are not judged: the recheck that
        follows is."""
        from evotui.eval.wall_timing import wall_fresh_vs_same

        def fresh_seed(i: int) -> int:
            return ((req.recheck_seed ^ 0x5DEECE66D) + 1 + i) % 2**63  # unlike any other set

        rounds = ValueRounds(model, calls, lambda values, seed: self._refill(values, task, shape, seed),
                             fresh_seed)

        def measure(first_round: int) -> Any:
            def values(i: int, kind: str) -> None:
                rounds.refresh(first_round + i, kind)

            if self.timer is not None:
                return self.timer.fresh_vs_same(rounds.call, values)
            return wall_fresh_vs_same(rounds.call, values)

        try:
            check = measure(0)
            if check.looks_cached(interpreter=self.timer is None):
                # confirmed on rounds of other values before it counts: a cache is slow on
                # new values every time, a burst of load on a shared CPU is not
                check = check.merged(measure(check.rounds))
            return check
        except BaseException as e:  # noqa: BLE001
            raise self._failure(e, req.candidate, "on new input values: ") from None
