"""The parameter mutator alone on every sample: best speedup vs eager and vs torch.compile,
% of roofline, evaluations per minute. One evaluator pool (every visible GPU) for all runs.

    python bench/bench_param_runs.py [--iterations 64] [--cap-s 90] [--samples a,b]
                                     [--memory-k 0] [--out DIR]

Each run stops at ``--iterations`` evaluated children, when the search is exhausted, or after
``--cap-s`` seconds (then it is stopped like Ctrl-C; the table says how far it got). Before
a sample's clock starts, every lane evaluates its seed once: the workers start and eager /
torch.compile are compiled and timed (the judge caches them per lane), so the first sample
does not spend its budget warming the pool. Writes ``param_runs.{md,json}`` and each run's
directory under --out.

Two rates: "evals/min" is the run's own (children over the run's whole wall time: the seed's
first evaluation, which also times eager and torch.compile, and the stop's drain included);
"steady/min" counts the children judged after the first child's verdict, over the time
from it to the last one's, which is what a long run approaches.
"""

from __future__ import annotations

import argparse
import asyncio
import faulthandler
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STALL_S = 240.0  # past the cap, a sample still running prints every thread's stack this often
sys.path.insert(0, str(ROOT))

from evotui.engine.events import CandidateEvaluated, Event  # noqa: E402
from evotui.engine.session import RunOptions, open_session  # noqa: E402
from evotui.eval import EvalRequest, EvaluatorPool  # noqa: E402
from evotui.task.model import resolve_task  # noqa: E402


def fmt(v: float | None, spec: str = ".2f", suffix: str = "") -> str:
    return "—" if v is None else f"{v:{spec}}{suffix}"


async def warm(pool: EvaluatorPool, name: str) -> float:
    """One seed evaluation per lane, concurrently; returns the seconds it took."""
    task = resolve_task(ROOT / "sample_kernels" / name)
    request = EvalRequest(task=task, source=task.seed_path.read_text())
    t0 = time.monotonic()
    await asyncio.gather(*(pool.aevaluate(request) for _ in pool.lanes))
    return time.monotonic() - t0


async def one(name: str, pool: EvaluatorPool, out: Path, iterations: int, cap_s: float,
              device: str, memory_k: int) -> dict:
    session = await open_session(RunOptions(
        task=str(ROOT / "sample_kernels" / name), device=device, iterations=iterations,
        mutator="param", out=str(out / name), memory_k=memory_k), evaluator=pool)
    engine = session.engine
    verdicts: list[float] = []  # when each child's verdict came (the seed's is not one)

    def show(ev: Event) -> None:
        if isinstance(ev, CandidateEvaluated):
            if ev.parent_id is not None:
                verdicts.append(time.monotonic())
            what = "accepted" if ev.accepted else f"rejected {ev.reason}: {ev.message[:120]}"
            m = ev.metrics
            speed = f" {m.time_ms * 1000:.1f} us x{fmt(m.speedup_eager)}" if m.time_ms else ""
            print(f"  {name} {ev.id} {what}{speed}{' *' if ev.new_best else ''}", flush=True)

    engine.subscribe(show)
    handle = asyncio.get_running_loop().call_later(cap_s, engine.stop, 15.0)
    try:
        result = await engine.run()
    finally:
        handle.cancel()
        await session.aclose()
    return {**result.report, "steady_evals_per_minute": steady_rate(verdicts)}


def steady_rate(verdicts: list[float]) -> float | None:
    """Children per minute between the first child's verdict and the last one's."""
    if len(verdicts) < 2 or verdicts[-1] <= verdicts[0]:
        return None
    return round((len(verdicts) - 1) * 60.0 / (verdicts[-1] - verdicts[0]), 1)


class PhaseLog:
    """Each evaluation's phases (seconds), as the pool measured them: where a candidate's time
    goes (start, load, warm, gate_wait, trials, timing, ghost, judge)."""

    def __init__(self, pool: EvaluatorPool) -> None:
        self.entries: list[dict[str, float]] = []
        evaluate = pool.aevaluate

        async def logged(request: EvalRequest, *args: object, **kwargs: object) -> object:
            result = await evaluate(request, *args, **kwargs)
            self.entries.append({**result.phases, "total": result.wall_s})
            return result

        pool.aevaluate = logged  # type: ignore[method-assign]

    def mean_since(self, start: int) -> dict[str, float]:
        entries = self.entries[start:]
        keys = sorted({k for e in entries for k in e})
        return {k: round(sum(e.get(k, 0.0) for e in entries) / len(entries), 3)
                for k in keys} if entries else {}


def device_usage(pool: EvaluatorPool) -> dict[str, dict[str, float]]:
    """Each device gate's seconds alone / draining / shared / idle so far, by its first lane."""
    gates = {}
    for lane in pool.lanes:
        gates.setdefault(id(lane.gate), (lane.label, lane.gate))
    return {label: gate.usage() for label, gate in gates.values()}


def usage_since(before: dict[str, dict[str, float]],
                after: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
    """The seconds of ``after`` less ``before``, as fractions of their sum, per device."""
    shares = {}
    for label, now in after.items():
        spent = {use: now[use] - before.get(label, {}).get(use, 0.0) for use in now}
        total = sum(spent.values()) or 1.0
        shares[label] = {use: round(v / total, 3) for use, v in spent.items()}
    return shares


def write_table(reports: dict[str, dict], out: Path) -> str:
    rows = ["| sample | evaluated | accepted | seed ×eager | best ×eager | best ×compile | "
            "best % roofline | best % same-size copy | best vs seed | evals/min | steady/min | "
            "outcome | best change |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, r in reports.items():
        seed, best = r.get("seed") or {}, r.get("best") or {}
        rows.append(
            f"| {name} | {r['evaluated']} | {r['accepted']} | {fmt(seed.get('speedup_eager'))} | "
            f"{fmt(best.get('speedup_eager'))} | {fmt(best.get('speedup_compile'))} | "
            f"{fmt(best.get('roofline_pct'), '.0f')} | {fmt(best.get('copy_pct'), '.0f')} | "
            f"{fmt(best.get('speedup_vs_seed'))} | {fmt(r['evaluations_per_minute'], '.1f')} | "
            f"{fmt(r.get('steady_evals_per_minute'), '.1f')} | {r['outcome']} | "
            f"{best.get('description', '')} |")
    table = "\n".join(rows)
    (out / "param_runs.md").write_text(table + "\n")
    (out / "param_runs.json").write_text(json.dumps(reports, indent=1))
    return table


async def main_async(args: argparse.Namespace) -> int:
    names = sorted(p.name for p in (ROOT / "sample_kernels").iterdir() if (p / "seed.py").exists())
    if args.samples:
        names = [n for n in names if n in args.samples.split(",")]
    args.out.mkdir(parents=True, exist_ok=True)
    if args.memory_k:  # a library of its own: the cold-start pack plus what these runs learn
        os.environ["EVOTUI_HOME"] = str(args.out / "home")
    reports: dict[str, dict] = {}
    with EvaluatorPool(args.device) as pool:
        print(f"lanes: {pool.devices}", flush=True)
        log = PhaseLog(pool)
        for name in names:
            # a run that stops making progress shows where every thread waits
            faulthandler.dump_traceback_later(args.cap_s + STALL_S, repeat=True)
            print(f"{name}: pool warmed in {await warm(pool, name):.0f} s", flush=True)
            t0, first, used = time.monotonic(), len(log.entries), device_usage(pool)
            reports[name] = await one(name, pool, args.out, args.iterations, args.cap_s, args.device,
                                      args.memory_k)
            r = reports[name]
            r["mean_phases_s"] = log.mean_since(first)
            r["device_use"] = usage_since(used, device_usage(pool))
            print(f"{name}: {r['outcome']} after {r['evaluated']} children in "
                  f"{time.monotonic() - t0:.0f} s; mean seconds per evaluation: "
                  f"{r['mean_phases_s']}; how the device was held (share of the time): "
                  f"{r['device_use']}", flush=True)
            write_table(reports, args.out)  # after each sample: a cut-short bench keeps its rows
            faulthandler.cancel_dump_traceback_later()
    print(write_table(reports, args.out))
    return 0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--iterations", type=int, default=64)
    ap.add_argument("--cap-s", type=float, default=90.0)
    ap.add_argument("--samples", default="")
    ap.add_argument("--memory-k", type=int, default=0,
                    help="advice per mutation (0: memory off, the pure search; 1-5: a fresh "
                         "library under OUT/home, cold-start pack first)")
    ap.add_argument("--device", default="auto")
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "gpu-results")))
    return asyncio.run(main_async(ap.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
