"""``suite.json`` and ``suite.md``: per problem, then KernelBench's fast_p and the geometric
mean speedup, against eager PyTorch and against torch.compile."""

from __future__ import annotations

from typing import Any

from evotui.suite import fastp
from evotui.suite.record import (
    ACCEPTED,
    NO_KERNEL,
    NOT_STARTED,
    PENDING,
    RUNNING,
    VERSION,
    ProblemResult,
    SuiteSettings,
    now,
)

BASELINES = {"eager": "speedup_eager", "compile": "speedup_compile"}
BASELINE_NAMES = {"eager": "eager PyTorch", "compile": "torch.compile"}
INTERPRETER_NA = "CPU interpreter: times are not kernel speed, no speedup is measured"


def _outcomes(results: list[ProblemResult], key: str) -> list[fastp.Outcome]:
    return [fastp.Outcome(r.status == ACCEPTED, getattr(r, key)) for r in results]


def speedup_na(r: ProblemResult, baseline: str) -> str | None:
    """Why an accepted problem has no speedup against ``baseline`` (None when it has one)."""
    if r.status != ACCEPTED or getattr(r, BASELINES[baseline]) is not None:
        return None
    if r.interpreter:
        return INTERPRETER_NA
    if baseline == "compile" and r.speedup_eager is not None:
        return "torch.compile could not be timed for this reference on the judge"
    return "not measured"


def summary(results: list[ProblemResult]) -> dict[str, Any]:
    n = len(results)
    out: dict[str, Any] = {
        "problems": n,
        "accepted": sum(r.status == ACCEPTED for r in results),
        "no_accepted_kernel": sum(r.status == NO_KERNEL for r in results),
        "could_not_start": [{"name": r.name, "reason": r.reason}
                            for r in results if r.status == NOT_STARTED],
        "not_finished": [r.name for r in results if r.status in (PENDING, RUNNING)],
        "allow_torch": [{"name": r.name, "ops": r.allow_torch,
                         "from_option": r.allow_torch_option}
                        for r in results if r.allow_torch],
        "evaluations": sum(r.evaluations for r in results),
        "fast_p": {}, "geomean_speedup": {}, "unmeasured": {}, "na": {},
        "fast_p_definition": "KernelBench: problems correct AND with speedup > p, divided by "
                             "ALL problems of the suite",
        "geomean_over": "accepted problems with a measured speedup",
    }
    for base, key in BASELINES.items():
        outcomes = _outcomes(results, key)
        measured = sum(1 for o in outcomes if o.correct and o.speedup is not None)
        out["unmeasured"][base] = fastp.unmeasured(outcomes)
        if out["accepted"] and not measured:
            reasons = {speedup_na(r, base) for r in results if r.status == ACCEPTED}
            out["na"][base] = "; ".join(sorted(x for x in reasons if x))
            out["fast_p"][base] = None
            out["geomean_speedup"][base] = None
            continue
        out["fast_p"][base] = fastp.fast_p_table(outcomes)
        out["geomean_speedup"][base] = fastp.geomean_speedup(outcomes)
    return out


def build(settings: SuiteSettings, results: list[ProblemResult], created: str) -> dict[str, Any]:
    return {"version": VERSION, "created": created, "updated": now(),
            "settings": settings.as_dict(), "summary": summary(results),
            "problems": [r.as_dict() for r in results]}


def _x(v: float | None) -> str:
    return "—" if v is None else f"{v:.2f}×"


def _pct(v: float | None) -> str:
    return "—" if v is None else f"{v:.0%}"


def _status(r: ProblemResult) -> str:
    if r.status == ACCEPTED:
        return "accepted"
    if r.status == NO_KERNEL:
        return f"no accepted kernel: {r.reason}" if r.reason else "no accepted kernel"
    if r.status == NOT_STARTED:
        return f"could not start: {r.reason}"
    return "running (interrupted)" if r.status == RUNNING or r.attempts else "not run yet"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _speed(r: ProblemResult, base: str) -> str:
    v = getattr(r, BASELINES[base])
    if v is not None:
        return _x(v)
    return "n/a" if speedup_na(r, base) else "—"


def markdown(settings: SuiteSettings, results: list[ProblemResult]) -> str:
    s = summary(results)
    n = s["problems"]
    where = settings.scheduler and f"Dask cluster {settings.scheduler}" or settings.device
    if any(r.interpreter for r in results):
        where += " (Triton CPU interpreter: correctness only, no speedups)"
    lines = [
        "# evotui suite", "",
        f"{n} problems · {settings.budget.describe()} · {settings.mutator} mutator · {where}", "",
        f"- accepted: {s['accepted']} of {n}",
        f"- no accepted kernel: {s['no_accepted_kernel']}",
        f"- could not start: {len(s['could_not_start'])}",
        f"- evaluations: {s['evaluations']}",
    ]
    if s["not_finished"]:
        lines.append(f"- not finished yet: {', '.join(s['not_finished'])} (run the same "
                     "command again to continue)")
    lines += ["", "## fast_p", "",
              "KernelBench's definition: the fraction of ALL problems in the suite that have an "
              "accepted (correct) kernel AND a speedup strictly greater than p. The geometric "
              f"mean is over the {s['geomean_over']}.", "",
              "| baseline | " + " | ".join(f"fast_{p:g}" for p in fastp.THRESHOLDS)
              + " | geomean speedup |",
              "| --- |" + " --- |" * (len(fastp.THRESHOLDS) + 1)]
    for base, label in BASELINE_NAMES.items():
        table = s["fast_p"][base]
        if table is None:
            cells = ["n/a"] * len(fastp.THRESHOLDS) + ["n/a"]
        else:
            cells = [_pct(table[f"fast_{p:g}"]) for p in fastp.THRESHOLDS]
            cells.append(_x(s["geomean_speedup"][base]))
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    for base, label in BASELINE_NAMES.items():
        if s["na"].get(base):
            lines.append(f"\nAgainst {label}: n/a ({s['na'][base]}).")
        elif s["unmeasured"][base]:
            missing = [f"{r.name} ({speedup_na(r, base)})" for r in results
                       if speedup_na(r, base)]
            lines.append(f"\nAgainst {label}, without a measured speedup (counted as not "
                         f"faster): {', '.join(missing)}.")
    lines += ["", "## Problems", "",
              "| problem | status | seed | vs eager | vs torch.compile | % of roofline | "
              "evaluations | run directory |",
              "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in results:
        torch_ops = f" (allow-torch: {', '.join(r.allow_torch)})" if r.allow_torch else ""
        roof = "—" if r.roofline_pct is None else f"{r.roofline_pct:.0f} %"
        lines.append(f"| {r.name}{torch_ops} | {_cell(_status(r))} | {r.seed_source or '—'} | "
                     f"{_speed(r, 'eager')} | {_speed(r, 'compile')} | {roof} | "
                     f"{r.evaluations}{' (time budget reached)' if r.time_budget_reached else ''}"
                     f" | {'—' if r.status == NOT_STARTED else f'`{r.run_dir}`'} |")
    if s["could_not_start"]:
        lines += ["", "## Could not start", ""]
        lines += [f"- {x['name']}: {_cell(x['reason'])}" for x in s["could_not_start"]]
    if s["allow_torch"]:
        lines += ["", "## Torch ops kept (allow_torch)", ""]
        lines += [f"- {x['name']}: {', '.join(x['ops'])}"
                  + (" (--allow-torch)" if x["from_option"] else " (the task's EVOTUI)")
                  for x in s["allow_torch"]]
    lines += ["", "Each problem's run directory lies beside this file and opens in the TUI: "
              "`evotui run --resume SUITE/NAME` (`--headless` continues it without the TUI)."]
    return "\n".join(lines) + "\n"
