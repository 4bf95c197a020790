"""Harness figures on a GPU: every sample's seed vs eager vs torch.compile vs the roofline,
run-to-run spread, and evaluation throughput.

    python bench/bench_samples.py [--runs 5] [--variants 4] [--out DIR]

- spread across runs: the seed evaluated ``--runs`` times (separate evaluations: fresh inputs,
  warm-up and timing each time) — (max - min) / median of the medians. On one GPU
  (``--device cuda:0``, the default): runs spread over several cards would also measure
  the differences between the cards;
  With ``--fresh-pool`` each run gets new worker and judge processes, as separate
  ``evotui bench`` commands do (slower: each pool measures the device and its baselines);
- throughput: ``--variants`` parameter variants per sample (each a new Triton compile),
  evaluated back to back after the first evaluation; candidates per minute per GPU.
Prints a Markdown table and writes bench_samples.{md,json} under --out.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evotui.engine.param_mutator import ParamMutator  # noqa: E402
from evotui.eval import EvalRequest, EvaluatorPool  # noqa: E402
from evotui.task.model import resolve_task  # noqa: E402


def fmt(v, spec=".2f", suffix=""):
    return "—" if v is None else f"{v:{spec}}{suffix}"


def evaluate_seed(pool: EvaluatorPool, args: argparse.Namespace, request: EvalRequest):
    if not args.fresh_pool:
        return pool.evaluate(request)
    with EvaluatorPool(args.device, timing_sets=args.timing_sets) as fresh:
        return fresh.evaluate(request)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--variants", type=int, default=4)
    ap.add_argument("--samples", default="", help="comma-separated subset")
    ap.add_argument("--timing-sets", type=int, default=12,
                    help="input sets the timed calls rotate over (the evaluator's default: 12)")
    ap.add_argument("--device", default="cuda:0",
                    help="where to evaluate (default cuda:0: the spread is one GPU's; 'cuda' for all)")
    ap.add_argument("--fresh-pool", action="store_true",
                    help="each run in new worker and judge processes (separate `evotui bench` runs)")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    # every sample's Triton seed, then the CUDA C seeds (label "NAME (cuda)")
    seeds = sorted((p.name, p / "seed.py") for p in (ROOT / "sample_kernels").iterdir()
                   if (p / "seed.py").exists())
    seeds += sorted((f"{p.name} (cuda)", p / "seed_cuda.py")
                    for p in (ROOT / "sample_kernels").iterdir() if (p / "seed_cuda.py").exists())
    if args.samples:
        wanted = args.samples.split(",")
        seeds = [(label, path) for label, path in seeds if label.split(" ")[0] in wanted]
    rows, data = [], {}
    with EvaluatorPool(args.device, timing_sets=args.timing_sets) as pool:
        facts = pool.device_facts() or {}
        print(f"device: {facts.get('name', pool.devices[0])}  copy {facts.get('copy_bytes_per_s', 0) / 1e12:.3f} TB/s"
              f"  bf16 matmul {facts.get('matmul_flops_per_s', 0) / 1e12:.0f} TFLOP/s", flush=True)
        throughput_n, throughput_s = 0, 0.0
        for name, seed_path in seeds:
            task = resolve_task(seed_path.parent)
            seed = seed_path.read_text()
            results = []
            for _ in range(args.runs):
                r = evaluate_seed(pool, args, EvalRequest(task=task, source=seed))
                results.append(r)
                if not r.accepted:
                    print(f"{name}: seed REJECTED: {r.reason}: {r.message}", flush=True)
                    break
            ok = [r for r in results if r.accepted]
            times = [r.time_ms for r in ok]
            last = ok[-1] if ok else results[-1]
            across = 100 * (max(times) - min(times)) / statistics.median(times) if len(times) > 1 else None
            rng = random.Random(0)
            mutator, tried, variants = ParamMutator(), set(), []
            for _ in range(args.variants):
                m = mutator.mutate(seed, rng, tried)
                if m is None:
                    break
                variants.append(m)
            t0 = time.monotonic()
            outcomes = [pool.evaluate(EvalRequest(task=task, source=m.source)) for m in variants]
            dt = time.monotonic() - t0
            throughput_n += len(variants)
            throughput_s += dt
            best_variant = min((o for o in outcomes if o.accepted), key=lambda o: o.time_ms, default=None)
            row = {
                "sample": name, "accepted": bool(ok), "seed_us": statistics.median(times) * 1000 if times else None,
                "eager_us": last.eager_ms * 1000 if last.eager_ms else None,
                "compile_us": last.compile_ms * 1000 if last.compile_ms else None,
                "speedup_eager": last.speedup_eager, "speedup_compile": last.speedup_compile,
                "roofline_pct": last.roofline_pct, "copy_pct": last.copy_pct, "method": last.timing_method,
                "within_run_spread_pct": last.spread_pct, "across_runs_spread_pct": across,
                "runs_us": [round(t * 1000, 2) for t in times],
                "runs_set_medians_us": [[round(t * 1000, 2) for t in r.set_medians_ms] for r in ok],
                "runs": len(times), "variant_seconds_each": dt / max(len(variants), 1),
                "variants_accepted": sum(o.accepted for o in outcomes),
                "variant_rejections": sorted({o.reason for o in outcomes if not o.accepted}),
                "best_variant_us": best_variant.time_ms * 1000 if best_variant else None,
                "variant_phases_s": {k: round(statistics.median(o.phases.get(k, 0.0) for o in outcomes), 3)
                                     for k in ("load", "trials", "timing", "timing:timer", "ghost", "judge")} if outcomes else {},
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
        data = {"device": facts, "samples": rows,
                "throughput_per_min_per_gpu": 60 * throughput_n / throughput_s if throughput_n else None}
    lines = [
        f"Device: {facts.get('name')} — measured copy {facts.get('copy_bytes_per_s', 0) / 1e12:.3f} TB/s, "
        f"bf16 matmul {facts.get('matmul_flops_per_s', 0) / 1e12:.0f} TFLOP/s",
        "",
        "| sample | seed µs | eager µs | compile µs | seed vs eager | seed vs compile | % roofline "
        "| % same-size copy | spread in run | spread across runs | timing |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['sample']} | {fmt(r['seed_us'], '.1f')} | {fmt(r['eager_us'], '.1f')} | {fmt(r['compile_us'], '.1f')} "
            f"| {fmt(r['speedup_eager'], '.2f', '×')} | {fmt(r['speedup_compile'], '.2f', '×')} "
            f"| {fmt(r['roofline_pct'], '.1f', ' %')} | {fmt(r['copy_pct'], '.1f', ' %')} "
            f"| {fmt(r['within_run_spread_pct'], '.2f', ' %')} "
            f"| {fmt(r['across_runs_spread_pct'], '.2f', ' %')} ({r['runs']} runs) | {r['method']} |")
    per_min = data["throughput_per_min_per_gpu"]
    lines += ["", "Evaluation throughput: not measured (--variants 0)" if per_min is None else
              f"Evaluation throughput: {per_min:.1f} candidates/min/GPU (param variants, each a fresh Triton compile)"]
    table = "\n".join(lines)
    print(table)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "bench_samples.md").write_text(table + "\n")
        (args.out / "bench_samples.json").write_text(json.dumps(data, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
