"""Chosen tunable settings of one sample's seed, evaluated on one GPU: a quick check of a
knob (does it compile, is it correct, how fast) before a search spends evaluations on it.

    python bench/bench_configs.py matmul_bias_relu "TMA_MODE=1" "TMA_MODE=2,BLOCK_N=256" \
        [--device cuda:0] [--out DIR]

Each setting is a comma-separated list of NAME=VALUE over the seed's tunables; the seed
itself is always evaluated first. ``--runs N`` evaluates each setting N times (separate
evaluations) and adds the spread across them, (max - min) / median. Prints a Markdown table
(median time, × eager, × torch.compile, % roofline, verdict) and writes
bench_configs_SAMPLE.{md,json} under --out.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evotui.engine.tunables import set_tunables  # noqa: E402
from evotui.eval import EvalRequest, EvaluatorPool  # noqa: E402
from evotui.task.model import resolve_task  # noqa: E402


def parse_setting(text: str) -> dict[str, int]:
    values = {}
    for part in filter(None, text.split(",")):
        name, _, value = part.partition("=")
        if not value:
            raise SystemExit(f"bad setting {part!r}: expected NAME=VALUE")
        values[name.strip()] = int(value)
    return values


def fmt(v: float | None, spec: str = ".2f", suffix: str = "") -> str:
    return "—" if v is None else f"{v:{spec}}{suffix}"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("sample")
    ap.add_argument("settings", nargs="*")
    ap.add_argument("--device", default="cuda:0")
    ap.add_argument("--runs", type=int, default=1, help="evaluations of each setting")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    task = resolve_task(ROOT / "sample_kernels" / args.sample)
    seed = task.seed_path.read_text()
    rows = ["| setting | accepted | µs | × eager | × compile | % roofline | spread across runs "
            "| timing | reason |", "|---|---|---|---|---|---|---|---|---|"]
    data = []
    with EvaluatorPool(args.device) as pool:
        for setting in ["", *args.settings]:
            try:
                source = set_tunables(seed, parse_setting(setting)) if setting else seed
            except KeyError as e:
                raise SystemExit(f"{args.sample}: the seed has no tunable {e}") from None
            results = [pool.evaluate(EvalRequest(task=task, source=source)) for _ in range(args.runs)]
            times = [r.time_ms for r in results if r.accepted and r.time_ms]
            spread = 100 * (max(times) - min(times)) / statistics.median(times) if len(times) > 1 else None
            r = results[-1]
            us = statistics.median(times) * 1000 if times else None
            data.append({**r.as_dict(), "setting": setting or "seed", "runs_ms": times,
                         "across_runs_spread_pct": spread})
            rows.append(f"| {setting or 'seed'} | {r.accepted} | {fmt(us, '.1f')} "
                        f"| {fmt(r.speedup_eager)} | {fmt(r.speedup_compile)} | {fmt(r.roofline_pct, '.1f')} "
                        f"| {fmt(spread, '.2f', ' %')} ({len(times)} runs) | {r.timing_method or '—'} "
                        f"| {'' if r.accepted else r.reason + ': ' + r.message[:100]} |")
            print(rows[-1], flush=True)
    table = "\n".join(rows)
    print(table)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / f"bench_configs_{args.sample}.md").write_text(table + "\n")
        (args.out / f"bench_configs_{args.sample}.json").write_text(json.dumps(data, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
