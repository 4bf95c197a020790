"""The model-free search on every sample: a fixed budget of the param mutator, then the best
found vs the seed, eager and torch.compile, and % of measured roofline.

    python bench/bench_param_search.py [--iterations 64] [--samples a,b] [--out DIR]

Each sample is one headless ``evotui run --mutator param`` (the same command users type);
the table is built from the runs' report.json files.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def fmt(v, spec=".2f", suffix=""):
    return "—" if v is None else f"{v:{spec}}{suffix}"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--iterations", type=int, default=64)
    ap.add_argument("--samples", default="")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--out", type=Path, default=Path("param-search"))
    ap.add_argument("--per-sample-timeout", type=float, default=900)
    args = ap.parse_args()
    names = sorted(p.name for p in (ROOT / "sample_kernels").iterdir() if (p / "seed.py").exists())
    if args.samples:
        names = [n for n in names if n in args.samples.split(",")]
    args.out.mkdir(parents=True, exist_ok=True)
    rows = []
    for name in names:
        run_dir = args.out / name
        t0 = time.monotonic()
        cmd = [sys.executable, "-m", "evotui", "run", str(ROOT / "sample_kernels" / name), "--headless",
               "--device", args.device, "--iterations", str(args.iterations), "--mutator", "param",
               "--out", str(run_dir)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.per_sample_timeout)
            status = f"exit {proc.returncode}"
        except subprocess.TimeoutExpired:
            status = "timed out (report is the last checkpoint's)"
        wall = time.monotonic() - t0
        report_file = run_dir / "report.json"
        if not report_file.exists():
            print(f"{name}: no report ({status})", flush=True)
            continue
        report = json.loads(report_file.read_text())
        seed, best = report.get("seed") or {}, report.get("best") or {}
        row = {"sample": name, "status": status, "wall_s": round(wall, 1),
               "evaluated": report.get("evaluated"), "accepted": report.get("accepted"),
               "seed_us": seed.get("time_ms") and seed["time_ms"] * 1000,
               "best_us": best.get("time_ms") and best["time_ms"] * 1000,
               "best_vs_eager": best.get("speedup_eager"), "best_vs_compile": best.get("speedup_compile"),
               "best_roofline_pct": best.get("roofline_pct"), "seed_vs_compile": seed.get("speedup_compile"),
               "best_description": best.get("description"),
               "evaluations_per_minute": report.get("evaluations_per_minute")}
        rows.append(row)
        print(json.dumps(row), flush=True)
    lines = [f"Param mutator, {args.iterations} evaluations per sample:", "",
             "| sample | seed µs | best µs | best vs eager | best vs compile | seed vs compile | % roofline | evals/min | best config |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['sample']} | {fmt(r['seed_us'], '.1f')} | {fmt(r['best_us'], '.1f')} "
                     f"| {fmt(r['best_vs_eager'], '.2f', '×')} | {fmt(r['best_vs_compile'], '.2f', '×')} "
                     f"| {fmt(r['seed_vs_compile'], '.2f', '×')} | {fmt(r['best_roofline_pct'], '.1f', ' %')} "
                     f"| {fmt(r['evaluations_per_minute'], '.1f')} | {r['best_description'] or ''} |")
    table = "\n".join(lines)
    print(table)
    (args.out / "param_search.md").write_text(table + "\n")
    (args.out / "param_search.json").write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
