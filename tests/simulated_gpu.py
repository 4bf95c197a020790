"""An evaluation or an A/B through the worker's GPU code path, on the CPU.

The worker's ``CandidateRunner`` times with a ``CudaTimer`` whose CUDA parts (events,
synchronize, L2 flush, sleep) are wall-clock stand-ins, and kernels run in Triton's
interpreter; the ``Judge`` decides as usual. What it shows is the sequence of calls a GPU
evaluation makes (which are prepared, which judged, which audited) — its times mean nothing.
Run in a process of its own (it patches the interpreter and torch.cuda.synchronize):

    TRITON_INTERPRET=1 python -m tests.simulated_gpu evaluate TASK_DIR CANDIDATE [--raw]
    TRITON_INTERPRET=1 python -m tests.simulated_gpu ab TASK_DIR INCUMBENT CHALLENGER [--raw]

Prints the verdict as one JSON line. ``--graph``: timed as graph replays (the method of calls
under ~20 µs); ``--drop-graph-replay``: the report then loses its replay on new values.
``--wall-clock-bars``: the value-cache check judges these wall-clock figures by the bars
it uses for the interpreter's (an honest candidate's verdict then does not depend on the
machine's load); without it, by a GPU's, as the cheats that check catches need.
``--raw``: static rules off (as ``EvaluatorPool(...,
static_checks=False)``). ``--sets=N``: N timing seeds asked for (default 3);
``--gpu-memory=BYTES``: the GPU's memory as the pool sees it, which decides how many of
those sets the request names (``memory_plan.TimingSetPlanner``).
"""

from __future__ import annotations

import json
import random
import shutil
import sys
import tempfile
import time
import types
from dataclasses import replace
from pathlib import Path
from typing import Any

from evotui.eval import timing
from evotui.eval.candidate_runner import CandidateRunner
from evotui.eval.judge import Judge
from evotui.eval.memory_plan import TimingSetPlanner
from evotui.eval.messages import Request
from evotui.eval.timing import CudaTimer
from evotui.task.model import resolve_task


class _WallEvent:
    def __init__(self, enable_timing: bool = True) -> None:
        self.at = 0.0

    def record(self) -> None:
        self.at = time.perf_counter()

    def elapsed_time(self, other: _WallEvent) -> float:
        return (other.at - self.at) * 1000


class SimulatedTimer(CudaTimer):
    def __init__(self) -> None:  # no device: nothing of CudaTimer's own set-up
        self.torch = types.SimpleNamespace(cuda=types.SimpleNamespace(_sleep=lambda cycles: None))
        self.Event = _WallEvent
        self.synchronize = lambda *args: None
        self.perf_counter = time.perf_counter

    graph = False  # --graph: every call timed as a graph replay (as under ~20 µs)

    def time(self, fn: Any, **kwargs: Any) -> Any:
        if not self.graph:
            return super().time(fn, **kwargs)
        self.timed_graph = None
        fn()
        unroll = timing.graph_unroll(kwargs.get("input_sets", 1))
        return self._time_graph(fn, rep_ms=10.0, unroll=unroll, watch=kwargs.get("watch"))

    def _time_graph(self, fn: Any, *, rep_ms: float, unroll: int = 20, watch: Any = None) -> Any:
        """A "graph" whose replay runs the captured calls again: no new values between its
        calls, as a real replay (here the candidate's Python runs each time too)."""
        def calls() -> None:
            for _ in range(unroll):
                fn()

        (watch or (lambda f: f()))(calls)  # the capture: its calls are watched
        self.timed_graph = types.SimpleNamespace(replay=calls)
        started = time.perf_counter()
        calls()
        per_call = (time.perf_counter() - started) * 1000 / unroll
        return timing.Timing(median_ms=per_call, spread_pct=0.0, samples=1, method="graph",
                             synced_ms=None)

    def flush(self) -> None:
        pass

    def intact(self) -> bool:
        return True


def _common(task: Any, scratch: Path, static_checks: bool, rng: random.Random,
            sets: int = 3) -> dict[str, Any]:
    def seed() -> int:
        return rng.randrange(1, 2**62)

    return {"task": str(task.path), "atol": task.meta.atol, "rtol": task.meta.rtol,
            "allow_torch": list(task.meta.allow_torch), "static_checks": static_checks,
            "scratch": str(scratch), "shapes": task.shapes("cpu"), "init_seed": seed(),
            "timing_seed": seed(), "timing_seeds": [seed() for _ in range(sets)],
            "recheck_seed": seed()}


def main(argv: list[str]) -> int:
    import torch

    raw = "--raw" in argv
    options = dict(a[2:].split("=", 1) for a in argv if a.startswith("--") and "=" in a)
    args = [a for a in argv if not a.startswith("--")]
    mode, task = args[0], resolve_task(Path(args[1]))
    rng = random.SystemRandom()
    if "--wall-clock-bars" in argv:  # the cache check's bars for wall-clock figures (before the
        # runner notes the harness's code)
        from evotui.eval.timing_stats import FreshCheck

        gpu_bars = FreshCheck.looks_cached
        FreshCheck.looks_cached = lambda check, interpreter: gpu_bars(check, True)
    runner = CandidateRunner("cpu")
    runner.timer = SimulatedTimer()
    runner.timer.graph = "--graph" in argv
    judge = Judge("cpu")
    scratch = Path(tempfile.mkdtemp(prefix="evotui-sim-"))
    asked = int(options.get("sets", 3))
    if "gpu-memory" in options:
        memory = int(options["gpu-memory"])
        asked = TimingSetPlanner(asked, 1, lambda device: memory).count(
            task, task.shapes("cpu")[0], "cuda:0")
    req = _common(task, scratch, not raw, rng, asked)
    if mode == "evaluate":
        cand = scratch / "candidate.py"
        shutil.copy(args[2], cand)
        shapes = req["shapes"]
        order = [0] + [1 if len(shapes) > 1 else 0] * 4
        req.update(candidate=str(cand), time=True, slow_cutoff_ms=None, dialect="triton",
                   trials=[{"seed": rng.randrange(1, 2**62), "shape": s} for s in order],
                   verify_seed=rng.randrange(1, 2**62), ghost_seed=rng.randrange(1, 2**62),
                   ghost_shape=1 if len(shapes) > 1 else 0)
        request = Request.from_json(req)
        report = runner.evaluate(request)
        verdict = judge.judge(request, report)
        timed = report.timing
        if "--drop-graph-replay" in argv and timed is not None:
            timed = replace(timed, graph_replay=None)
            verdict = judge.judge(request, replace(report, timing=timed))
        print(json.dumps({"accepted": verdict.accepted, "reason": verdict.reason,
                          "message": verdict.message,
                          "timed_sets": len(timed.inputs_after) if timed else 0,
                          "method": timed.method if timed else None,
                          "graph_replayed": bool(timed and timed.graph_replay)}))
    else:
        torch.cuda.synchronize = lambda *a, **k: None  # compare ends with one
        paths = []
        for name, src in (("incumbent", args[2]), ("challenger", args[3])):
            paths.append(str(scratch / f"{name}.py"))
            shutil.copy(src, paths[-1])
        req["candidates"] = paths
        request = Request.from_json(req)
        check = judge.check_ab(request, runner.compare(request))
        print(json.dumps({"ok": check.accepted, "reason": check.reason, "message": check.message,
                          "index": check.index}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
