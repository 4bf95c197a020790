"""The evaluator pool: one lane per device, each lane a candidate worker and a judge.

A candidate that crashes, hangs, exits, breaks its CUDA context or floods its output costs
one worker restart and one rejected candidate (invariant 3). The pool is thread-safe;
``aevaluate`` is the asyncio face the engine uses.
"""

from __future__ import annotations

import asyncio
import os
import queue
import random
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import evotui.eval.protocol as protocol
from evotui.core import reasons
from evotui.dialects.base import Backend, StaticIssue
from evotui.eval.control import Op
from evotui.eval.device_gate import DeviceGate
from evotui.eval.evaluator import Evaluator
from evotui.eval.judging import JUDGE_TIMEOUT_S, WAIT_MARGIN_S, judged
from evotui.eval.lanes import (  # noqa: F401 - detect_devices and friends are the pool's too
    Gate,
    Lane,
    LaneClaim,
    detect_devices,
    empty_folder,
    let_go,
    per_device_from_env,
    physical_gpu,
    protected_paths,
    sandbox_disabled_by_env,
    start_workers,
)
from evotui.eval.memory_plan import TimingSetPlanner, handover_limit
from evotui.eval.messages import ABReport, MalformedMessage, Request, TrialSpec, Verdict
from evotui.eval.results import ABResult, EvalRequest, EvalResult
from evotui.eval.sandbox import Isolation
from evotui.eval.sandbox_state import SandboxState, local_sandbox_state
from evotui.eval.workers import WorkerDied, WorkerProcess, WorkerTimeout, facts_of
from evotui.task.model import TaskRef


class OutputsTooBig(Exception):
    """A task whose outputs cannot fit the host's share even with the fewest trials."""


class EvaluatorPool(Evaluator):
    """Evaluate candidates on every lane in parallel; one candidate per lane at a time."""

    def __init__(self, device: str = "auto", lanes: int | None = None,
                 static_checks: bool = True, timing_sets: int = 12,
                 sandbox: bool | None = None, per_device: int | None = None) -> None:
        # static_checks=False exists for the harness's own tests: it lets a deliberately
        # hostile candidate reach the worker, to prove the runtime defences hold on their own.
        self.static_checks = static_checks
        # every candidate in its own confined process (evotui.eval.sandbox); off only when
        # asked for (--no-sandbox, EVOTUI_NO_SANDBOX=1)
        self.sandbox = sandbox if sandbox is not None else not sandbox_disabled_by_env()
        # timed calls rotate over up to this many separately allocated input sets (placement
        # effects average out); a GPU worker times as many as fit in a share of its memory
        # (timing.timing_set_count); more sets cost memory and a little time per candidate
        self.timing_sets = max(1, timing_sets)
        self.devices = detect_devices(device)
        if lanes is not None and self.devices == ["cpu"]:
            self.devices = ["cpu"] * max(1, lanes)
        # candidates per device: while one is timed, the next ones start, compile and load
        # (each waits for the device's gate before its trials); one judge per device
        self.per_device = max(1, per_device if per_device is not None else per_device_from_env())
        self._root = Path(tempfile.mkdtemp(prefix="evotui-", dir=protocol.scratch_root()))
        self._free: queue.Queue[Lane] = queue.Queue()
        self.lanes: list[Lane] = []
        shared: dict[str, Lane] = {}
        # one gate per device (per lane where a device has one lane: CPU lanes all say "cpu")
        gates = len(set(self.devices)) if self.per_device > 1 else len(self.devices)
        for i, dev in enumerate(d for d in self.devices for _ in range(self.per_device)):
            if dev == "cpu":
                env = {"TRITON_INTERPRET": "1", "CUDA_VISIBLE_DEVICES": ""}
                inner = "cpu"
            else:
                env = {"CUDA_VISIBLE_DEVICES": physical_gpu(dev.split(":")[1]),
                       "TRITON_INTERPRET": "0"}
                inner = "cuda:0"
            env["EVOTUI_WORKER_ROOT"] = str(self._root)  # removed with the pool, whatever happens
            scratch = self._root / f"lane{i}"
            scratch.mkdir()
            first = shared.get(dev) if self.per_device > 1 else None
            if first is None:
                lane = Lane(inner, dev, WorkerProcess("candidate", inner, env),
                            WorkerProcess("judge", inner, env), scratch,
                            gate=DeviceGate(handover_limit(gates)),
                            shares_device=self.per_device > 1)
                shared[dev] = lane
            else:
                lane = Lane(inner, dev, WorkerProcess("candidate", inner, env), first.judge,
                            scratch, gate=first.gate, shares_device=True)
            self.lanes.append(lane)
            self._free.put(lane)
        self._rng = random.SystemRandom()  # seeds a candidate cannot predict
        self.device_names: dict[str, str] = {}
        self._arch: str | None = None  # compile target of the parent's NVRTC check
        self._closed = False
        self.handover_bytes = self.lanes[0].gate.host_bytes
        self._sets = TimingSetPlanner(self.timing_sets, self.per_device, self._memory_of,
                                      self.handover_bytes)
        self._primed: set[tuple[int, str]] = set()  # (judge's pid, task): baselines timed
        self._device_facts: dict[str, dict[str, Any]] = {}  # by lane label

    @property
    def is_cpu(self) -> bool:
        return self.devices[0] == "cpu"

    def start(self) -> None:
        """Start every worker now (otherwise they start on first use)."""
        for lane in self.lanes:
            start_workers(lane)

    def isolation(self) -> Isolation | None:
        """What the sandbox holds on this pool's machine, as its first candidate worker found
        it (starting that worker); None when the worker cannot start."""
        worker = self.lanes[0].candidate
        try:
            if not worker.alive:
                worker.start()
        except (WorkerDied, WorkerTimeout):
            return None
        found = worker.hello.isolation
        return Isolation.from_dict(found) if found is not None else None

    def sandbox_state(self) -> SandboxState:
        return local_sandbox_state(self.sandbox, self.isolation)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for lane in self.lanes:
            lane.candidate.stop()
            lane.judge.stop()
        shutil.rmtree(self._root, ignore_errors=True)

    async def aevaluate(self, request: EvalRequest) -> EvalResult:
        """``evaluate`` in a thread. Cancelling it (a stopped run) kills the candidate's
        worker, so that its lane is free at once rather than when the candidate ends."""
        call = LaneClaim()
        work = asyncio.ensure_future(asyncio.to_thread(self.evaluate, request, call))
        try:
            return await asyncio.shield(work)
        except asyncio.CancelledError:
            call.abort()
            raise

    def device_facts(self) -> dict[str, Any] | None:
        lane = self._free.get()
        try:
            return self._facts(lane) or None
        finally:
            self._free.put(lane)

    def _memory_of(self, device: str) -> int | None:
        """The memory of the GPU ``device`` (a lane label), as its judge reports it."""
        return self._facts(next(lane for lane in self.lanes if lane.label == device)).get(
            "memory_bytes")

    def _facts(self, lane: Lane) -> dict[str, Any]:
        """The device's facts, measured once (timed: with the device alone, past warm-ups)."""
        if lane.label not in self._device_facts:
            with lane.gate.judging(alone=True, past_warm_ups=True):
                if not lane.judge.alive:
                    lane.judge.start()
                self._device_facts[lane.label] = facts_of(
                    lane.judge.request(Op("facts"), JUDGE_TIMEOUT_S))
        return self._device_facts[lane.label]

    async def acompare(self, task: TaskRef, incumbent: str, challenger: str,
                       timeout_s: float = 300.0) -> ABResult | None:
        return await asyncio.to_thread(self.compare, task, incumbent, challenger, timeout_s)

    def compare(self, task: TaskRef, incumbent: str, challenger: str,
                timeout_s: float = 300.0) -> ABResult | None:
        """Interleaved A/B timing of two accepted candidates before declaring a gain.
        None on the CPU, where there is no kernel timing to compare."""
        if self.is_cpu:
            return None
        lane = self._free.get()
        try:
            return self._compare_on(lane, task, incumbent, challenger, timeout_s)
        finally:
            empty_folder(lane.scratch)
            self._free.put(lane)

    def _compare_on(self, lane: Lane, task: TaskRef, incumbent: str, challenger: str,
                    timeout_s: float) -> ABResult:
        try:
            start_workers(lane)
        except (WorkerDied, WorkerTimeout) as e:
            return ABResult(ok=False, reason=reasons.HARNESS_ERROR, message=str(e))
        paths = []
        for name, source in (("incumbent", incumbent), ("challenger", challenger)):
            path = lane.scratch / f"{name}.py"
            path.write_text(source, encoding="utf-8")
            paths.append(str(path))
        shapes, seed = task.shapes("cuda"), lambda: self._rng.randrange(1, 2**62)
        sets = self._sets.count(task, shapes[0], lane.label)
        req = Request(**self._task_fields(task), candidates=tuple(paths), scratch=str(lane.scratch),
                      shapes=tuple(shapes), init_seed=seed(), timing_seed=seed(),
                      timing_seeds=tuple(seed() for _ in range(sets)), recheck_seed=seed())
        with Gate(lane, self.handover_bytes) as gate:  # until its bytes are judged and let go
            try:
                answer = lane.candidate.request(Op("compare", req, timeout_s=timeout_s),
                                                timeout_s + WAIT_MARGIN_S, on_gate=gate.on_ask)
            except WorkerTimeout:
                return ABResult(ok=False, reason=reasons.TIMEOUT, message="A/B timing timed out")
            except WorkerDied as e:
                return ABResult(ok=False, reason=reasons.CRASHED, message=str(e))
            report = gate.checked(ABReport.parse(answer))
            gate.release()
            try:
                with lane.gate.judging():
                    check = Verdict.from_json(lane.judge.request(Op("check_ab", req, report),
                                                                 JUDGE_TIMEOUT_S))
            except (WorkerDied, WorkerTimeout, MalformedMessage) as e:
                lane.judge.kill()
                return ABResult(ok=False, reason=reasons.HARNESS_ERROR,
                                message=f"judge failed: {e}")
            finally:
                let_go(lane.candidate)
        if not check.accepted:
            return ABResult(ok=False, reason=check.reason, message=check.message)
        return ABResult.from_timings(*(t.as_dict() for t in report.timings))

    def sanitize(self, task: TaskRef, source: str, timeout_s: float = 600.0) -> Any:
        """compute-sanitizer on a CUDA C candidate, on one lane's GPU while the lane is held
        (``evotui.dialects.cuda.sanitizer``). None when it does not apply: a CPU pool,
        another dialect, no compute-sanitizer on this machine, or EVOTUI_SANITIZE=0."""
        from evotui.dialects import backend_for_source

        if self.is_cpu or backend_for_source(source).name != "cuda" \
                or os.environ.get("EVOTUI_SANITIZE", "1") == "0":
            return None
        from evotui.dialects.cuda import sanitizer

        if sanitizer.find() is None:
            return None
        lane = self._free.get()
        try:
            path = lane.scratch / "sanitize.py"
            path.write_text(source, encoding="utf-8")
            lane.gate.share()  # untimed, but never beside a candidate's timing
            try:
                return sanitizer.run(str(task.path), str(path),
                                     gpu=physical_gpu(lane.label.split(":")[1]), timeout_s=timeout_s)
            finally:
                lane.gate.unshare()
        finally:
            empty_folder(lane.scratch)
            self._free.put(lane)

    async def asanitize(self, task: TaskRef, source: str, timeout_s: float = 600.0) -> Any:
        return await asyncio.to_thread(self.sanitize, task, source, timeout_s)

    def evaluate(self, request: EvalRequest, call: LaneClaim | None = None) -> EvalResult:
        from evotui.dialects import backend_for_source

        t0 = time.monotonic()
        backend = backend_for_source(request.source)
        issue = self._precheck(backend, request.source)
        if issue is not None:
            where = f"line {issue.line}: " if issue.line else ""
            return EvalResult.rejected(issue.reason, f"{where}{issue.message}",
                                       wall_s=time.monotonic() - t0,
                                       device=self.devices[0], interpreter=self.is_cpu)
        checked = time.monotonic()
        lane = self._free.get()
        got_lane = time.monotonic()
        try:
            if call is not None and not call.claim(lane):
                return EvalResult.rejected(reasons.HARNESS_ERROR, "cancelled before it started",
                                           wall_s=time.monotonic() - t0, device=lane.label,
                                           interpreter=self.is_cpu)
            result = self._evaluate_on(lane, request, t0, backend.name)
            # the parent's own parts of the wall time: its static checks, the wait for a lane,
            # and the rest (the request built, the outputs let go)
            result.phases.update(precheck=checked - t0, lane_wait=got_lane - checked,
                                 pool=time.monotonic() - got_lane - sum(
                                     result.phases.get(k, 0.0) for k in ("worker", "judge")))
            return result
        finally:
            if call is not None:
                call.release()
            empty_folder(lane.scratch)
            self._free.put(lane)

    def _precheck(self, backend: Backend, source: str) -> StaticIssue | None:
        """Everything decided in this process before a worker sees the candidate: static
        rules; for CUDA C a compile with NVRTC (no GPU needed, so compile errors are reported
        on CPU-only machines too); then whether this pool can run the dialect at all."""
        issue = backend.check_source(source) if self.static_checks else None
        if issue is None and self.static_checks:
            issue = backend.precheck(source, self._compile_arch())
        if issue is None and backend.needs_gpu and self.is_cpu:
            issue = StaticIssue(reasons.NEEDS_GPU,
                                f"{backend.name} candidates run only on a GPU: it compiles, but "
                                "this evaluator is on the CPU (use --device cuda on a GPU machine)",
                                0)
        return issue

    def _compile_arch(self) -> str:
        """The architecture the parent's compile check targets: $EVOTUI_CUDA_ARCH, else on a
        GPU pool the first GPU's ("auto:N": the compile subprocess asks the driver, this
        process never does), else sm_90."""
        if self._arch is None:
            from evotui.dialects.cuda.device import DEFAULT_ARCH

            self._arch = os.environ.get("EVOTUI_CUDA_ARCH") or (
                DEFAULT_ARCH if self.is_cpu else f"auto:{self.devices[0].split(':')[1]}")
        return self._arch

    def _build_request(self, lane: Lane, request: EvalRequest, dialect: str = "triton"
                       ) -> Request:
        task = request.task
        shapes = task.shapes("cpu" if lane.device == "cpu" else "cuda")
        cand_file = lane.scratch / "candidate.py"
        cand_file.write_text(request.source, encoding="utf-8")
        seed = lambda: self._rng.randrange(1, 2**62)  # noqa: E731
        # The timed shape is checked three more times around timing; the trials favour the
        # other shapes (cheaper, and where shape-specialised cheats fail). A task whose
        # outputs crowd the host's share runs fewer (one per shape at least).
        plan = self._sets.handover(task, shapes[0], lane.label, max(request.trials, len(shapes)),
                                   len(shapes))
        if not plan.fits:
            raise OutputsTooBig(self._too_big(task, shapes[0]))
        order = [0] + list(range(1, len(shapes))) * plan.trials if len(shapes) > 1 else [0] * plan.trials
        trials = tuple(TrialSpec(seed(), order[i]) for i in range(plan.trials))
        return Request(
            **self._task_fields(task), candidate=str(cand_file), scratch=str(lane.scratch),
            shapes=tuple(shapes), init_seed=seed(), trials=trials, time=request.time,
            timing_seed=seed(), slow_cutoff_ms=request.slow_cutoff_ms,
            timing_seeds=tuple(seed() for _ in range(self._sets.count(task, shapes[0], lane.label))),
            handover_limit_bytes=plan.limit_bytes,
            recheck_seed=seed(), verify_seed=seed(), ghost_seed=seed(),
            ghost_shape=1 if len(shapes) > 1 else 0,
            dialect=dialect,  # the judge checks the CUDA dialect's guard bands
            warm_seed=seed())

    def _task_fields(self, task: TaskRef) -> dict[str, Any]:
        """What every request about a task carries, for an evaluation or an A/B alike."""
        return {"task": str(task.path), "task_sha256": task.sha256,
                "sandbox": self.sandbox, "protected": tuple(protected_paths(task)),
                "atol": task.meta.atol, "rtol": task.meta.rtol,
                "allow_torch": tuple(task.meta.allow_torch),
                "static_checks": self.static_checks,
                "gate": self.per_device > 1}  # off: the worker skips the PTX rules too

    def _evaluate_on(self, lane: Lane, request: EvalRequest, t0: float,
                     dialect: str = "triton") -> EvalResult:
        common = {"device": lane.label, "interpreter": lane.device == "cpu"}
        try:
            start_workers(lane)
        except (WorkerDied, WorkerTimeout) as e:
            return EvalResult.rejected(reasons.HARNESS_ERROR, str(e), **common)
        try:
            req = self._build_request(lane, request, dialect)
        except OutputsTooBig as e:
            return EvalResult.rejected(reasons.HARNESS_ERROR, str(e), **common)
        # shared or alone as the candidate asks, then shared until its bytes are judged and
        # let go; its outputs' share of the host memory reserved as long
        with Gate(lane, req.handover_limit_bytes) as gate:
            try:
                return judged(lane, req, request, gate, common, t0, self._primed)
            finally:
                let_go(lane.candidate)

    def _too_big(self, task: TaskRef, shape: dict[str, Any]) -> str:
        _, outputs, _ = self._sets.sizes(task, shape)
        return (f"this task's outputs take {_size(outputs)} a call: even with one trial per "
                "shape a candidate hands over more than the host memory kept for one device's "
                f"outputs ({_size(self._sets.handover_bytes or 0)}); evaluate it at a smaller "
                "--shape")


def _size(nbytes: int) -> str:
    for unit, scale in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if nbytes >= 1 << scale:
            return f"{nbytes / (1 << scale):.3g} {unit}"
    return f"{nbytes} bytes"
