"""Where one evaluation's time goes: the candidate's side and the judge's, under cProfile.

    python scripts/profile_eval.py sample_kernels/softmax [--device cuda] [--repeat 2] [--top 25]

Runs in this process, without the sandbox (a profile of the harness, not of the confinement):
the request is built as the pool builds it, the outputs are handed over through a real
outbox channel as in a sandboxed run, and the judge reads them the same way. The second and
later repeats are the steady state (the first pays for compiling kernels and the baselines).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evotui.eval import outbox  # noqa: E402
from evotui.eval.candidate_runner import CandidateRunner  # noqa: E402
from evotui.eval.judge import Judge  # noqa: E402
from evotui.eval.pool import EvaluatorPool  # noqa: E402
from evotui.eval.results import EvalRequest  # noqa: E402
from evotui.task.model import resolve_task  # noqa: E402


def profiled(label: str, fn, top: int):
    prof = cProfile.Profile()
    t0 = time.perf_counter()
    prof.enable()
    value = fn()
    prof.disable()
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(top)
    pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(top // 2)
    print(f"--- {label}: {time.perf_counter() - t0:.3f} s")
    print("\n".join(line[:160] for line in out.getvalue().splitlines()
                    if line.strip() and "function calls" not in line))
    return value


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("sample", type=Path)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--top", type=int, default=25)
    args = ap.parse_args()

    task = resolve_task(args.sample)
    source = (args.sample / "seed.py").read_text()
    device = "cpu" if args.device == "cpu" else "cuda:0"
    pool = EvaluatorPool.__new__(EvaluatorPool)  # only its request builder: no workers
    pool.timing_sets, pool.sandbox, pool.static_checks = 12, False, True
    import random

    pool._rng = random.SystemRandom()
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    outbox.open_channel(theirs.detach())
    held = outbox.Received([])
    done = threading.Event()

    def drain() -> None:
        while not done.is_set() and outbox.receive(ours, held, 1 << 40):
            pass

    threading.Thread(target=drain, daemon=True).start()
    runner = profiled("runner start (CUDA, timer)", lambda: CandidateRunner(
        device, CandidateRunner.load_tasks({"task": str(task.path), "task_sha256": task.sha256})),
        args.top)
    judge = Judge(device)
    with tempfile.TemporaryDirectory() as scratch:
        lane = type("Lane", (), {"device": device, "scratch": Path(scratch)})()
        for k in range(args.repeat):
            held.close()
            held.key = None
            outbox._sent = 0  # each request's blobs count from 0, as in a process of its own
            req = pool._build_request(lane, EvalRequest(task=task, source=source, time=True))
            report = profiled(f"candidate side #{k}", lambda req=req: runner.evaluate(req), args.top)
            time.sleep(0.2)  # the drain thread takes the last descriptors
            report["blobs"] = [outbox.path_of(fd) for fd in held.fds]
            report["digest_key"] = held.key
            print("phases:", {p: round(v, 3) for p, v in report.get("phases", {}).items()})
            verdict = profiled(f"judge #{k}", lambda req=req, report=report: judge.judge(req, report),
                               args.top)
            print("verdict:", verdict.get("reason"), verdict.get("message", "")[:200])
    done.set()
    return 0


if __name__ == "__main__":
    sys.exit(main())
