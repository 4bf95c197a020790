"""The A/B experiment's figures: the target, evaluations to reach it, the best result per
arm — and the same as a rich table and as ``ab.md``.

Evaluations to the target count evaluated children (the seed is evaluation 0, so a run whose
seed already meets the target took 0). A run that never reaches it counts as "not reached"
(shown as ``>N``) and ranks after every run that did.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from typing import Any

ARMS = ("off", "on")
ARM_TITLES = {"off": "memory off", "on": "memory on"}


@dataclass
class RunRecord:
    """One run of the experiment, reduced to what the comparison needs."""

    arm: str  # "learn" | "off" | "on"
    seed: int
    task: str
    run_dir: str
    outcome: str
    evaluated: int
    iterations: int
    seed_time_ms: float | None
    best_time_ms: float | None
    best_speedup_eager: float | None
    # curve[i]: the best time after i evaluated children (curve[0]: the seed's)
    curve: list[float | None] = field(default_factory=list)
    llm_calls: int = 0
    children_with_advice: int = 0
    improved_with_advice: int = 0
    advice: dict[str, Any] = field(default_factory=dict)  # the run's report "advice" section
    evals_to_target: int | None = None
    target_ms: float | None = None


def reach(curve: list[float | None], target_ms: float) -> int | None:
    """The first number of evaluations after which the best time is within the target."""
    for i, t in enumerate(curve):
        if t is not None and t <= target_ms * (1 + 1e-9):
            return i
    return None


def apply_target(runs: list[RunRecord], target_pct: float,
                 target_speedup: float | None) -> dict[str, Any]:
    """Fill ``evals_to_target``; returns how the target was set. Without a speedup, the
    target is ``target_pct`` % of the best result of every compared run (both arms): a time
    of best / (pct / 100). With one, each run's seed time / speedup."""
    compared = [r for r in runs if r.arm in ARMS]
    best = min((r.best_time_ms for r in compared if r.best_time_ms), default=None)
    for r in compared:
        if target_speedup:
            r.target_ms = r.seed_time_ms / target_speedup if r.seed_time_ms else None
        else:
            r.target_ms = best / (target_pct / 100) if best else None
        r.evals_to_target = reach(r.curve, r.target_ms) if r.target_ms else None
    if target_speedup:
        return {"kind": "speedup", "speedup_vs_seed": target_speedup}
    return {"kind": "pct_of_best", "pct": target_pct, "best_ms": best,
            "target_ms": best / (target_pct / 100) if best else None}


def _median(values: list[float]) -> float | None:
    return float(statistics.median(values)) if values else None


def summarize(runs: list[RunRecord]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for arm in ARMS:
        rs = [r for r in runs if r.arm == arm]
        reached = [r.evals_to_target for r in rs if r.evals_to_target is not None]
        ranked = [math.inf if r.evals_to_target is None else r.evals_to_target for r in rs]
        med = _median(ranked)
        bests = [r.best_time_ms for r in rs if r.best_time_ms]
        out[arm] = {
            "runs": len(rs),
            "reached": len(reached),
            "evals_to_target": [r.evals_to_target for r in rs],
            "median_evals_to_target": None if med is None or math.isinf(med) else med,
            "mean_evals_to_target_reached": statistics.fmean(reached) if reached else None,
            "median_best_ms": _median(bests),
            "best_ms": min(bests) if bests else None,
            "mean_llm_calls": statistics.fmean([r.llm_calls for r in rs]) if rs else 0.0,
            "children_with_advice": sum(r.children_with_advice for r in rs),
            "improved_with_advice": sum(r.improved_with_advice for r in rs),
        }
    return out


def paired_runs(runs: list[RunRecord], stopped: bool) -> list[RunRecord]:
    """The runs a verdict may compare: after a stop, only the seeds whose two arms both ran
    to the end (an interrupted run, or a seed with one arm, would weigh unequal arms)."""
    if not stopped:
        return runs
    complete = [r for r in runs if r.arm != "learn" and r.evaluated >= r.iterations]
    seeds = {r.seed for r in complete
             if all(any(o.seed == r.seed and o.arm == arm for o in complete) for arm in ARMS)}
    return [r for r in runs if r.arm == "learn" or (r.seed in seeds and r in complete)]


def verdict(summary: dict[str, dict[str, Any]], iterations: int) -> str:
    if summary["off"]["runs"] == 0 or summary["on"]["runs"] == 0:
        return "stopped before any seed ran both arms to the end: no verdict"
    off, on = summary["off"], summary["on"]
    a, b = off["median_evals_to_target"], on["median_evals_to_target"]
    if a is None and b is None:
        return (f"neither arm reached the target in most runs: memory off in {off['reached']} "
                f"of {off['runs']}, memory on in {on['reached']} of {on['runs']} (budget "
                f"{iterations} evaluations)")
    if a is None:
        return "memory on reached the target in most runs; memory off did not"
    if b is None:
        return "memory off reached the target in most runs; memory on did not"
    if a == b:
        return f"both arms needed {a:g} evaluations (median) to reach the target"
    if a == 0:
        return f"memory off needed no evaluation; memory on {b:g} (median)"
    change = (a - b) / a * 100
    more = "fewer" if change > 0 else "more"
    return (f"memory on needed {b:g} evaluations (median) to reach the target, memory off "
            f"{a:g}: {abs(change):.0f} % {more}")


def fmt_time(ms: float | None, interpreter: bool) -> str:
    if ms is None:
        return "—"
    return f"{ms:.1f} ms" if interpreter else f"{ms * 1000:.1f} µs"


def _evals(n: float | int | None, iterations: int) -> str:
    return f">{iterations}" if n is None else f"{n:g}"


def rows(data: dict[str, Any]) -> list[tuple[str, str, str]]:
    """The side-by-side table: (what, memory off, memory on)."""
    s, it, interp = data["summary"], data["iterations"], data["interpreter"]

    def both(fn: Any) -> tuple[str, str]:
        return fn(s["off"]), fn(s["on"])

    out = [
        ("runs (seeds)", *both(lambda a: str(a["runs"]))),
        ("reached the target", *both(lambda a: f"{a['reached']} of {a['runs']}")),
        ("evaluations to target, median", *both(lambda a: _evals(a["median_evals_to_target"], it))),
        ("evaluations to target, per seed", *both(
            lambda a: " ".join(_evals(x, it) for x in a["evals_to_target"]))),
        ("best result, median", *both(lambda a: fmt_time(a["median_best_ms"], interp))),
        ("best result, overall", *both(lambda a: fmt_time(a["best_ms"], interp))),
        ("children made with advice", *both(
            lambda a: f"{a['children_with_advice']} ({a['improved_with_advice']} improved)")),
    ]
    if data.get("mutator") in ("llm", "mixed"):
        out.append(("model calls per run, mean", *both(lambda a: f"{a['mean_llm_calls']:.1f}")))
    return out


def target_line(data: dict[str, Any]) -> str:
    t, interp = data["target"], data["interpreter"]
    if t["kind"] == "speedup":
        return f"target: {t['speedup_vs_seed']:g}× the seed's speed"
    return (f"target: {t['pct']:g} % of the best result of all runs "
            f"({fmt_time(t['best_ms'], interp)} → {fmt_time(t['target_ms'], interp)} or faster)")


def render_markdown(data: dict[str, Any]) -> str:
    interp = data["interpreter"]
    learn = data.get("learn")
    lines = [f"# evotui A/B: {data['task']}, memory off vs on", ""]
    if interp:
        lines += ["**Triton CPU interpreter:** times are interpreter wall times, not kernel "
                  "speed. This run shows the mechanics only; measure on a GPU.", ""]
    lines += [
        f"- {data['verdict']}.",
        f"- {target_line(data)}.",
        f"- budget: {data['iterations']} evaluated children per run, {data['mutator']} mutator, "
        f"{len(data['seeds'])} seeds ({', '.join(map(str, data['seeds']))}), memory k = "
        f"{data['memory_k']}; device {data['device']}"
        + (f" ({data['gpu']})" if data.get("gpu") else "") + ".",
    ]
    if learn:
        adv = learn.get("advice") or {}
        lines.append(f"- learned first on `{learn['task']}` ({learn['evaluated']} evaluations): "
                     f"{adv.get('proposed', 0)} {'piece' if adv.get('proposed', 0) == 1 else 'pieces'} of "
                     "advice proposed, "
                     f"{adv.get('merged', 0)} merged.")
    lines.append(f"- library: {data['library']['source']} ({data['library']['path']}).")
    lines += ["", "| | memory off | memory on |", "| --- | --- | --- |"]
    lines += [f"| {a} | {b} | {c} |" for a, b, c in rows(data)]
    lines += ["", "## Runs", "", "| arm | seed | evaluated | to target | best | run |",
              "| --- | --- | --- | --- | --- | --- |"]
    for r in data["runs"]:
        lines.append(f"| {r['arm']} | {r['seed']} | {r['evaluated']} | "
                     f"{'—' if r['arm'] == 'learn' else _evals(r['evals_to_target'], r['iterations'])} | "
                     f"{fmt_time(r['best_time_ms'], interp)} | `{r['run_dir']}` |")
    return "\n".join(lines) + "\n"


__all__ = ["ARMS", "RunRecord", "apply_target", "reach", "render_markdown", "rows",
           "summarize", "target_line", "verdict", "paired_runs"]
