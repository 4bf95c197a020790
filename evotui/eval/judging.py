"""One evaluation on a lane, once the pool has built its request: the candidate worker runs
it (asking for the device's gate on the way), the report is read and checked against what the
pool saw, and the judge gives the verdict, with the device shared, after timing a new task's
baselines with the device alone (``prime``)."""

from __future__ import annotations

import time
from typing import Any

from evotui.core import reasons
from evotui.eval.control import Op
from evotui.eval.lanes import Gate, Lane
from evotui.eval.messages import MalformedMessage, Report, Request, Verdict
from evotui.eval.results import EvalRequest, EvalResult
from evotui.eval.workers import WorkerDied, WorkerTimeout

OUTPUT_LIMIT_BYTES = 1 * 1024 * 1024
WAIT_MARGIN_S = 30.0  # the worker kills a candidate at its timeout; the pool waits this longer
JUDGE_TIMEOUT_S = 900.0  # a first judgement may time eager and torch.compile

Primed = set[tuple[int, str]]  # (judge's pid, task): its baselines are timed


def prime(lane: Lane, req: Request, primed: Primed) -> None:
    """The judge times a task's baselines and a same-size copy once per judge process, with
    the device alone, past other candidates' warm-ups too: every later speedup of the task is
    divided by them (judging only reads them, beside other candidates' checks)."""
    if lane.device == "cpu":
        return
    task = f"{req.task}:{req.task_sha256}"
    if lane.judge.alive and (lane.judge.pid, task) in primed:
        return
    with lane.gate.judging(alone=True, past_warm_ups=True):
        if not lane.judge.alive:
            lane.judge.start()
        if (lane.judge.pid, task) not in primed:
            lane.judge.request(Op("prime", req), JUDGE_TIMEOUT_S)
            primed.add((lane.judge.pid, task))


def judged(lane: Lane, req: Request, request: EvalRequest, gate: Gate,
           common: dict[str, Any], t0: float, primed: Primed) -> EvalResult:
    worker = lane.candidate
    started = time.monotonic()
    try:  # the same request goes to the judge
        report = gate.checked(Report.parse(worker.request(
            Op("evaluate", req, timeout_s=request.timeout_s),
            request.timeout_s + WAIT_MARGIN_S, on_gate=gate.on_ask)))
    except WorkerTimeout:
        report = Report.failed(reasons.TIMEOUT,
                               f"no result within {request.timeout_s:.0f} s; worker restarted")
    except WorkerDied as e:
        report = Report.failed(reasons.CRASHED, f"{e} (worker restarted); last output: "
                               f"{worker.tail(300).strip()!r}")
    elapsed_ms = (time.monotonic() - started) * 1000
    tail = worker.tail()
    if worker.output_bytes > OUTPUT_LIMIT_BYTES:
        report = Report.failed(reasons.OUTPUT_FLOOD, f"printed {worker.output_bytes / 1e6:.1f} "
                               f"MB (limit {OUTPUT_LIMIT_BYTES / 1e6:.0f} MB)", restart=True)
    timing = report.timing
    if report.ok and timing and timing.median_ms * timing.samples > elapsed_ms:
        report = Report.failed(reasons.TIMER_TAMPERED,
                               "reported kernel time exceeds the wall-clock time of the run")
    phases = dict(report.phases)
    phases["worker"] = elapsed_ms / 1000  # the candidate worker's request, sent to answered
    gate.release()  # the judge takes the device at its turn (its outputs' memory stays reserved)
    judge_started = time.monotonic()
    try:
        if report.ok and timing is not None:
            prime(lane, req, primed)
        def read_ahead() -> None:  # the judge's host work, while others may be timed
            if lane.judge.alive:  # (a judge that starts does so sharing the device)
                read_started = time.monotonic()
                lane.judge.request(Op("read", req, report), JUDGE_TIMEOUT_S)
                phases["judge_read"] = time.monotonic() - read_started

        with lane.gate.judging(reading=read_ahead if report.ok and report.blobs else None):
            phases["judge_wait"] = (time.monotonic() - judge_started  # (and the prime's)
                                    - phases.get("judge_read", 0.0))
            verdict = Verdict.from_json(lane.judge.request(Op("judge", req, report),
                                                           JUDGE_TIMEOUT_S))
    except (WorkerDied, WorkerTimeout, MalformedMessage) as e:
        lane.judge.kill()
        return EvalResult.rejected(reasons.HARNESS_ERROR, f"judge failed: {e}", **common,
                                   worker_output_tail=tail)
    phases["judge"] = time.monotonic() - judge_started
    phases.update({f"judge:{part}": seconds for part, seconds in verdict.phases.items()})
    # Candidate code never ran in the worker (each candidate had a process of its own), so
    # only a worker that died is restarted (after the judge: it held the report's bytes).
    if not worker.alive:
        worker.kill()  # restarted lazily before the next candidate
    elif verdict.reason == reasons.HARNESS_ERROR:
        # whatever went wrong (out of GPU memory, a broken cache) stays with the processes:
        # the engine's retry gets fresh ones; the judge (whose baselines cost a
        # torch.compile to redo) only when it was the one that failed
        worker.kill()
        if report.ok:
            lane.judge.kill()
    return EvalResult.from_verdict(verdict, common, time.monotonic() - t0, tail, phases)
