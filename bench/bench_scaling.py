"""Evaluator throughput on one GPU vs every visible GPU of the host (target: all GPUs ≥ 1.8× one).

    python bench/bench_scaling.py [--per-sample 8] [--samples a,b] [--out DIR]

For each pool (first ``cuda:0`` alone, then every visible GPU), every lane is warmed with each
sample's seed (this first evaluation also compiles and times eager and torch.compile, which
the judge caches per lane), then a batch of parameter variants is evaluated with one request
in flight per lane. The two batches are disjoint halves of the same variant list (alternate
picks), and each pass starts with an empty Triton cache of its own, so both compile from cold. Prints candidates per minute for
each pool, their ratio and the harness overhead per candidate (wall time minus the time the
worker spent timing), and writes bench_scaling.{md,json} under --out.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evotui.engine.param_mutator import ParamMutator  # noqa: E402
from evotui.eval import EvalRequest, EvalResult, EvaluatorPool  # noqa: E402
from evotui.task.model import TaskRef, resolve_task  # noqa: E402

MEMORY_BOUND = ("add_gelu", "cross_entropy", "layernorm", "rmsnorm", "row_sum", "softmax")


def variants(task: TaskRef, n: int) -> list[str]:
    seed = task.seed_path.read_text()
    rng, tried, out = random.Random(1), set(), []
    while len(out) < n:
        m = ParamMutator().mutate(seed, rng, tried)
        if m is None:
            break
        out.append(m.source)
    return out


def run_pool(device: str, batch: list[tuple[TaskRef, str]], tasks: list[TaskRef]) -> dict:
    # the workers inherit the environment: a fresh compile cache for this pass
    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(prefix="evotui-scaling-triton-")
    with EvaluatorPool(device) as pool:
        lanes = len(pool.devices)
        with ThreadPoolExecutor(lanes) as ex:
            t0 = time.monotonic()
            for task in tasks:  # one seed evaluation per lane and task
                seed = task.seed_path.read_text()
                list(ex.map(pool.evaluate, [EvalRequest(task=task, source=seed)] * lanes))
            warm_s = time.monotonic() - t0
            t0 = time.monotonic()
            results: list[EvalResult] = list(ex.map(
                pool.evaluate, [EvalRequest(task=t, source=s) for t, s in batch]))
            dt = time.monotonic() - t0
    timing = [r.phases.get("timing", 0.0) for r in results]
    walls = [r.wall_s for r in results]
    return {
        "device": device, "lanes": lanes, "candidates": len(results), "seconds": dt,
        "warm_up_s": warm_s, "per_minute": 60 * len(results) / dt,
        "accepted": sum(r.accepted for r in results),
        "rejections": sorted({r.reason for r in results if not r.accepted}),
        "median_wall_s": statistics.median(walls),
        "median_timing_s": statistics.median(timing),
        "median_overhead_s": statistics.median(w - t for w, t in zip(walls, timing, strict=True)),
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-sample", type=int, default=8, help="variants per sample and pass")
    ap.add_argument("--samples", default=",".join(MEMORY_BOUND))
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    tasks = [resolve_task(ROOT / "sample_kernels" / n) for n in args.samples.split(",")]
    one_gpu, all_gpus = [], []
    for task in tasks:
        found = variants(task, 2 * args.per_sample)
        one_gpu += [(task, s) for s in found[0::2]]
        all_gpus += [(task, s) for s in found[1::2]]
    one = run_pool("cuda:0", one_gpu, tasks)
    print(json.dumps(one), flush=True)
    every = run_pool("cuda", all_gpus, tasks)
    print(json.dumps(every), flush=True)
    ratio = every["per_minute"] / one["per_minute"]
    lines = [
        "| pool | lanes | candidates | accepted | seconds | candidates/min | median wall s "
        "| median timing s | median overhead s |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in (one, every):
        lines.append(f"| {r['device']} | {r['lanes']} | {r['candidates']} | {r['accepted']} "
                     f"| {r['seconds']:.1f} | {r['per_minute']:.1f} | {r['median_wall_s']:.2f} "
                     f"| {r['median_timing_s']:.2f} | {r['median_overhead_s']:.2f} |")
    lines += ["", f"Scaling: {every['lanes']} GPUs give {ratio:.2f}× the throughput of one "
              f"(target ≥ 1.8× on two)."]
    table = "\n".join(lines)
    print(table)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "bench_scaling.md").write_text(table + "\n")
        (args.out / "bench_scaling.json").write_text(
            json.dumps({"one": one, "every": every, "ratio": ratio}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
