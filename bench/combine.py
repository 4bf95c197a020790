"""One Markdown table from the GPU benchmarks' JSON files, with the throughput targets checked.

    python bench/combine.py DIR [--out FILE]

DIR is what ``scripts/gpu-check.sh`` leaves under $OUT: ``bench_samples.json`` (required),
``param-runs/param_runs.json``, ``param-runs-memory/param_runs.json`` (the same search with
the advice library on), ``bench_scaling.json`` and ``ab/ab.json`` (each optional).
Per sample: the naive seed, the best the parameter mutator found (and with memory on), eager,
torch.compile, the roofline and the run-to-run spread; then throughput, scaling, harness
overhead, the memory A/B, and each target met or its gap.

The copy target is judged twice: against the copy bandwidth measured on 1 GiB (the card's
best) and against a copy of the task's own bytes (what any kernel of that size can reach:
launch and tail costs included).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

COPY_TARGET_PCT = 92.0
GEOMEAN_TARGET = 1.15
MATMUL_TARGET = 1.0
SCALING_TARGET = 1.8
# the samples the targets are about (rmsnorm_fp16 / rmsnorm_wide are the A/B's variants)
MEMORY_BOUND = ("add_gelu", "cross_entropy", "layernorm", "rmsnorm", "row_sum", "softmax")
COMPUTE_BOUND = ("matmul_bias_relu",)


@dataclass(frozen=True)
class Row:
    sample: str
    seed_us: float | None
    best_us: float | None
    evaluated: int | None  # children the param run evaluated (None: no run)
    outcome: str
    eager_us: float | None
    compile_us: float | None
    best_compile: float | None  # best vs torch.compile (the seed's when there is no run)
    best_roofline: float | None
    best_copy: float | None
    spread_pct: float | None
    memory_compile: float | None = None  # best vs torch.compile with the advice library on
    memory_evaluated: int | None = None


def _load(path: Path) -> Any:
    return json.loads(path.read_text()) if path.is_file() else None


def rows(samples: dict[str, Any], runs: dict[str, Any] | None,
         memory_runs: dict[str, Any] | None = None) -> list[Row]:
    out = []
    for s in samples["samples"]:
        run = (runs or {}).get(s["sample"]) or {}
        with_memory = (memory_runs or {}).get(s["sample"]) or {}
        best = run.get("best") or {}
        if not (best and run.get("evaluated", 0) > 0):  # no search: the seed is the best
            best = {"time_ms": s["seed_us"] and s["seed_us"] / 1000,
                    "speedup_compile": s["speedup_compile"],
                    "roofline_pct": s["roofline_pct"], "copy_pct": s.get("copy_pct")}
        out.append(Row(
            sample=s["sample"], seed_us=s["seed_us"],
            best_us=best["time_ms"] * 1000 if best.get("time_ms") else None,
            evaluated=run.get("evaluated") if run else None,
            outcome=run.get("outcome", "no run") if run else "no run",
            eager_us=s["eager_us"], compile_us=s["compile_us"],
            best_compile=best.get("speedup_compile"), best_roofline=best.get("roofline_pct"),
            best_copy=best.get("copy_pct"), spread_pct=s["across_runs_spread_pct"],
            memory_compile=(with_memory.get("best") or {}).get("speedup_compile"),
            memory_evaluated=with_memory.get("evaluated")))
    return out


def _f(v: float | None, spec: str = ".1f", unit: str = "") -> str:
    return "—" if v is None else f"{v:{spec}}{unit}"


def targets(table: list[Row], scaling: dict[str, Any] | None) -> list[str]:
    by_name = {r.sample: r for r in table}
    mem = [by_name[n] for n in MEMORY_BOUND if n in by_name]
    missing = [n for n in MEMORY_BOUND if n not in by_name or by_name[n].best_roofline is None]
    gap = " (no figure for " + ", ".join(missing) + ")" if missing else ""
    lines = []
    short = [f"{r.sample} {r.best_roofline:.0f} %" for r in mem
             if r.best_roofline is not None and r.best_roofline < COPY_TARGET_PCT]
    met = not short and not missing
    lines.append(f"- memory-bound ≥ {COPY_TARGET_PCT:.0f} % of measured copy bandwidth (1 GiB copy): "
                 + ("met" if met else "not met — " + ", ".join(short + ([gap.strip()] if gap else []))))
    same = [r for r in mem if r.best_copy is not None]
    if same:
        below = [f"{r.sample} {r.best_copy:.0f} %" for r in same if r.best_copy < COPY_TARGET_PCT]
        complete = len(same) == len(MEMORY_BOUND)
        lo, hi = min(r.best_copy for r in same), max(r.best_copy for r in same)
        lines.append("- the same against a copy of each task's own bytes: "
                     + (f"met ({lo:.0f}–{hi:.0f} %)" if complete and not below else
                        "not met — " + ", ".join(below or [f"figures for {len(same)} of "
                                                           f"{len(MEMORY_BOUND)} samples only"])))
    ratios = [r.best_compile for r in mem if r.best_compile]
    if ratios:
        g = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        verdict = "met" if g >= GEOMEAN_TARGET and len(ratios) == len(MEMORY_BOUND) else "not met"
        if len(ratios) < len(MEMORY_BOUND):
            verdict += f" (over {len(ratios)} of {len(MEMORY_BOUND)} samples only)"
        lines.append(f"- geometric mean over memory-bound samples ≥ {GEOMEAN_TARGET}× torch.compile: "
                     f"{g:.2f}× — {verdict}")
    for name in COMPUTE_BOUND:
        r = by_name.get(name)
        if r is None or (r.best_compile is None and r.memory_compile is None):
            lines.append(f"- {name} ≥ {MATMUL_TARGET}× torch.compile: not met (no figure)")
            continue
        found = [x for x in (r.best_compile, r.memory_compile) if x is not None]
        how = f"{r.best_compile:.2f}× by the pure search" if r.best_compile is not None else ""
        if r.memory_compile is not None:
            how += (", " if how else "") + f"{r.memory_compile:.2f}× with the advice library on"
        lines.append(f"- {name} ≥ {MATMUL_TARGET}× torch.compile: {how} — "
                     f"{'met' if max(found) >= MATMUL_TARGET else 'not met'}")
    if scaling:
        ratio = scaling["ratio"]
        lines.append(f"- {scaling['every']['lanes']} GPUs ≥ {SCALING_TARGET}× one: {ratio:.2f}× — "
                     f"{'met' if ratio >= SCALING_TARGET else 'not met'}")
    return lines


def render(folder: Path) -> str:
    samples = _load(folder / "bench_samples.json")
    if samples is None:
        raise FileNotFoundError(f"{folder / 'bench_samples.json'} is missing")
    runs = _load(folder / "param-runs" / "param_runs.json")
    memory_runs = _load(folder / "param-runs-memory" / "param_runs.json")
    scaling = _load(folder / "bench_scaling.json")
    ab = _load(folder / "ab" / "ab.json")
    facts = samples.get("device") or {}
    table = rows(samples, runs, memory_runs)
    out = [f"Device: {facts.get('name', '?')} — measured copy "
           f"{facts.get('copy_bytes_per_s', 0) / 1e12:.2f} TB/s, bf16 matmul "
           f"{facts.get('matmul_flops_per_s', 0) / 1e12:.0f} TFLOP/s", "",
           "| sample | seed µs | best µs (param run) | eager µs | compile µs | best vs compile "
           "| best % roofline | best % same-size copy | spread across runs |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in table:
        run = "no run" if r.evaluated is None else f"{r.evaluated} evals, {r.outcome}"
        out.append(f"| {r.sample} | {_f(r.seed_us)} | {_f(r.best_us)} ({run}) | {_f(r.eager_us)} "
                   f"| {_f(r.compile_us)} | {_f(r.best_compile, '.2f', '×')} "
                   f"| {_f(r.best_roofline, '.0f', ' %')} | {_f(r.best_copy, '.0f', ' %')} "
                   f"| {_f(r.spread_pct, '.2f', ' %')} |")
    for r in table:
        if r.memory_compile is not None:
            out.append(f"\nWith the advice library on (cold-start pack, 3 pieces of advice per "
                       f"mutation): {r.sample} best {r.memory_compile:.2f}× torch.compile in "
                       f"{r.memory_evaluated} evaluations.")
    out += ["", f"Throughput: {_f(samples.get('throughput_per_min_per_gpu'))} candidates/min/GPU "
            "(parameter variants, each a fresh compile)."]
    if scaling:
        one, every = scaling["one"], scaling["every"]
        out.append(f"Scaling: {one['per_minute']:.0f} candidates/min on one GPU, "
                   f"{every['per_minute']:.0f} on {every['lanes']}; harness overhead "
                   f"{one['median_overhead_s']:.2f} s per candidate beside "
                   f"{one['median_timing_s']:.2f} s of timing.")
    if ab:
        s = ab["summary"]
        seeds = ab["seeds"] if isinstance(ab["seeds"], int) else len(ab["seeds"])
        out.append(f"Memory A/B ({ab['task']}, {seeds} seeds × {ab['iterations']} "
                   f"evaluations): {s['off']['median_evals_to_target']:g} evaluations to "
                   f"{ab['target']['pct']:g} % of the best with memory off, "
                   f"{s['on']['median_evals_to_target']:g} with memory on.")
    out += ["", "Targets:"] + targets(table, scaling)
    return "\n".join(out) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folder", type=Path)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    try:
        text = render(args.folder)
    except FileNotFoundError as e:
        print(f"combine: {e}", file=sys.stderr)
        return 2
    print(text, end="")
    if args.out:
        args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
