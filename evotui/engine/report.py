"""The run report: ``report.json`` figures, ``report.md`` for people, the ``best.py`` header.

On the CPU interpreter, times are wall times of Triton's interpreter: they rank candidates
but are never called speedups (``speedup_*`` stay null there).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from evotui.engine.population import Candidate, Population
from evotui.engine.state import EngineConfig, RunState
from evotui.task.model import TaskRef


class HasPopulation(Protocol):
    """A running engine, as far as ``lineage`` and ``origin_id`` care."""

    @property
    def population(self) -> Population: ...


@dataclass(frozen=True)
class RunFigures:
    """What the report says of a run besides its candidates (those are in ``RunState``)."""

    task: TaskRef
    devices: tuple[str, ...]
    interpreter: bool  # times are Triton interpreter wall times: never called speedups
    gpu: Mapping[str, Any]  # "name", "arch" when known
    mutator: str
    model: str | None
    llm: Mapping[str, Any]  # the mutator's account
    config: EngineConfig
    run_dir: Path | None
    elapsed: float  # seconds, resumes included
    advice: Mapping[str, Any] | None = None  # the end-of-run distillation, once it ran
    seed_origin: str | None = None  # "file PATH", "derived from the reference (...)", ...


def evals_per_minute(evaluated: int, elapsed: float) -> float:
    minutes = elapsed / 60
    return round(evaluated / minutes, 2) if minutes > 0 else 0.0


def _population(of: Population | HasPopulation) -> Population:
    return of if isinstance(of, Population) else of.population


def _metrics(c: Candidate | None, parent_id: str | None = None) -> dict[str, Any] | None:
    """A candidate for ``report.json``: who it is, then its figures, flat."""
    if c is None:
        return None
    return {
        "id": c.id,
        "parent_id": parent_id if parent_id is not None else c.parent_id,
        "mutator": c.mutator,
        "model": c.model,
        "description": c.description,
        **c.metrics.to_dict(),
    }


def lineage(of: Population | HasPopulation, c: Candidate) -> list[Candidate]:
    """From the seed down to ``c`` (copies are skipped over)."""
    pop = _population(of)
    chain: list[Candidate] = []
    node: Candidate | None = c
    while node is not None and len(chain) < 1000:
        if node.copy_of is None:
            chain.append(node)
        pid = node.parent_id
        node = pop.get(pid) if pid and pid in pop else None
    return chain[::-1]


def origin_id(of: Population | HasPopulation, cid: str | None) -> str | None:
    """The program ``cid`` is: itself, or the original of a copy (an island's seed copy, a
    migrant), so that a parent id always names a candidate that was evaluated."""
    pop = _population(of)
    seen = 0
    while cid and cid in pop and pop.get(cid).copy_of and seen < 1000:
        cid, seen = pop.get(cid).copy_of, seen + 1
    return cid


def build_report(state: RunState, run: RunFigures) -> dict[str, Any]:
    pop = state.population
    done = state.children()
    counts = pop.counts(seeds=False)
    seed = pop.get(state.seed_id) if state.seed_id and state.seed_id in pop else None
    best = state.best
    best_dict = _metrics(best, origin_id(pop, best.parent_id) if best else None)
    interpreter = run.interpreter
    if best_dict is not None:
        seed_ms = seed.metrics.time_ms if seed is not None else None
        best_ms = best.metrics.time_ms if best is not None else None
        ratio = seed_ms / best_ms if seed_ms and best_ms else None
        best_dict["speedup_vs_seed"] = None if interpreter or ratio is None else round(ratio, 4)
        best_dict["lineage"] = [x.id for x in lineage(pop, best)] if best else []
    with_advice = [c for c in done if c.advice_ids]
    advice = {**(run.advice or {"distilled": False, "why": "the run has not ended",
                                          "proposed": 0, "merged": 0}),
              "children_with_advice": len(with_advice),
              "improved_with_advice": sum(bool(c.extra.get("improved")) for c in with_advice)}
    return {
        "task": run.task.name,
        "task_path": str(run.task.path),
        "device": ", ".join(run.devices),
        "gpu": {k: run.gpu.get(k) for k in ("name", "arch")},
        "interpreter": interpreter,
        "mutator": run.mutator,
        "model": run.model,
        "outcome": state.outcome,
        "message": state.outcome_message,
        "iterations": run.config.iterations,
        "evaluated": state.evaluated,
        "generations": state.generation,
        "accepted": counts["by_status"]["accepted"],
        "rejected": counts["by_status"]["rejected"],
        "rejected_by_reason": counts["by_reason"],
        "by_mutator": counts["by_mutator"],
        "seed": _metrics(seed),
        "seed_origin": run.seed_origin,
        "best": best_dict,
        "llm": dict(run.llm),
        "advice": advice,
        "eval_seconds": round(state.eval_seconds, 2),  # summed over candidates: lanes overlap
        "wall_seconds": round(run.elapsed, 2),
        "evaluations_per_minute": evals_per_minute(state.evaluated, run.elapsed),
        "config": run.config.to_dict(),
        "run_dir": str(run.run_dir) if run.run_dir else None,
        "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def _fmt(v: Any, unit: str = "", digits: int = 2) -> str:
    if v is None:
        return "—"
    if isinstance(v, float):
        return f"{v:.{digits}f}{unit}"
    return f"{v}{unit}"


def best_summary(report: dict[str, Any]) -> str:
    best = report.get("best")
    if not best:
        return "no accepted candidate"
    if report["interpreter"]:
        return (f"{best['id']}: {_fmt(best['time_ms'], ' ms', 1)} of interpreter wall time "
                "(CPU interpreter: not a kernel speed)")
    parts = [f"{best['id']}: {_fmt(best['time_ms'] and best['time_ms'] * 1000, ' µs')}"]
    if best.get("speedup_eager") is not None:
        parts.append(f"{best['speedup_eager']:.2f}× eager")
    if best.get("speedup_compile") is not None:
        parts.append(f"{best['speedup_compile']:.2f}× torch.compile")
    if best.get("roofline_pct") is not None:
        parts.append(f"{best['roofline_pct']:.0f} % of roofline")
    if best.get("copy_pct") is not None:
        parts.append(f"{best['copy_pct']:.0f} % of a same-size copy")
    return ", ".join(parts)


def versus_seed(report: dict[str, Any]) -> str:
    """The best against the seed, in words: "1.42× faster than the seed c0001 (…)"."""
    best, seed = report.get("best"), report.get("seed")
    if not best or not seed or not best.get("time_ms") or not seed.get("time_ms"):
        return "—"
    if best["id"] == seed["id"]:
        return "the seed is the best: no child beat it by more than the noise margin"
    interp = report["interpreter"]
    unit = (lambda t: f"{t:.1f} ms") if interp else (lambda t: f"{t * 1000:.1f} µs")
    ratio = seed["time_ms"] / best["time_ms"]
    words = (f"{ratio:.2f}× faster" if ratio >= 1 else f"{1 / ratio:.2f}× slower")
    what = " in interpreter wall time (not a kernel speed)" if interp else ""
    return (f"{words} than the seed {seed['id']}{what}: {unit(seed['time_ms'])} → "
            f"{unit(best['time_ms'])}")


def render_markdown(report: dict[str, Any]) -> str:
    r = report
    llm = r["llm"]
    model = f" ({r['model']})" if r["model"] else ""
    where = " (Triton CPU interpreter: times are not kernel speed)" if r["interpreter"] else ""
    lines = [
        f"# evotui run: {r['task']}",
        "",
        f"{r['outcome']}: {r['message']}",
        "",
        "| | |",
        "| --- | --- |",
        f"| task | `{r['task_path']}` |",
        f"| device | {r['device']}{where} |",
        f"| mutator | {r['mutator']}{model} |",
        f"| evaluated | {r['evaluated']} of {r['iterations']} ({r['generations']} generations) |",
        f"| accepted / rejected | {r['accepted']} / {r['rejected']} |",
        f"| best | {best_summary(r)} |",
        f"| best vs the seed | {versus_seed(r)} |",
        f"| evaluations per minute | {_fmt(r['evaluations_per_minute'])} |",
        f"| evaluation seconds | {_fmt(r['eval_seconds'])} (summed over candidates) |",
        f"| wall seconds | {_fmt(r['wall_seconds'])} |",
    ]
    if r["rejected_by_reason"]:
        lines += ["", "## Rejections", "", "| reason | count |", "| --- | --- |"]
        lines += [f"| {k} | {v} |" for k, v in r["rejected_by_reason"].items()]
    if llm["calls"] or llm["failures"]:
        lines += [
            "", "## Model", "", "| | |", "| --- | --- |",
            f"| calls | {llm['calls']} (retries {llm['retries']}) |",
            f"| failures | {llm['failures']} "
            + (f"({', '.join(f'{k}: {v}' for k, v in llm['failures_by_kind'].items())})"
               if llm["failures_by_kind"] else "") + " |",
            f"| tokens | {llm['prompt_tokens']} prompt, {llm['completion_tokens']} completion |",
            f"| seconds | {_fmt(llm['seconds'])} ({_fmt(llm['tokens_per_s'])} tokens/s) |",
        ]
    lines += _advice_lines(r.get("advice"))
    best = r.get("best")
    if best and best.get("lineage"):
        lines += ["", "## How the best came about", "", " → ".join(best["lineage"])]
        if best.get("description"):
            lines += ["", f"Last change: {best['description']}"]
    return "\n".join(lines) + "\n"


def _advice_lines(a: dict[str, Any] | None) -> list[str]:
    if not a:
        return []
    lines = ["", "## Advice library", ""]
    if a.get("children_with_advice"):
        lines.append(f"- {a['children_with_advice']} children were made with advice; "
                     f"{a.get('improved_with_advice', 0)} of them beat their parent.")
    if not a.get("distilled"):
        lines.append(f"- Not distilled: {a.get('why', 'unknown reason')}.")
        return lines
    lines.append(f"- Distilled: {a['proposed']} proposed, {a['merged']} merged into existing "
                 f"advice, from {a.get('eligible', 0)} mutations over "
                 f"{a.get('min_gain', 0.05) * 100:.0f} % (`evotui advice list --status proposed`).")
    if a.get("note"):
        lines.append(f"- Note: {a['note']}.")
    for item in a.get("items") or []:
        if item.get("text"):
            lines.append(f"- {item['parent']} → {item['child']} ({item['method']}"
                         f"{', merged' if item.get('merged') else ''}): {item['text']}")
    return lines


def best_file(report: dict[str, Any], source: str) -> str:
    """``best.py``: the candidate's source (standalone: torch + triton) under a short header."""
    header = [
        f"# Best candidate of an evotui run on task `{report['task']}` ({report['device']}):",
        f"# {best_summary(report)}.",
        f"# Check it again with: evotui bench {report['task_path']} best.py",
    ]
    return "\n".join(header) + "\n" + source.lstrip("\n")
