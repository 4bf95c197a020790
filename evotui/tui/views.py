"""Immutable views of a run, as the TUI draws them (no Textual here).

The feed (``evotui.tui.feed``) folds engine events into these; one ``Frame`` per refresh
carries what changed since the previous one. Formatting helpers that several panels share
live here too, so the status line, the table and the details screen say the same thing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from evotui.core.metrics import Metrics

INTERPRETER_NOTE = "CPU interpreter — times are not kernel speed"
NO_MODEL = "param mutator (no model)"


@dataclass(frozen=True)
class CandidateRow:
    """One candidate as the Population table shows it."""

    id: str
    order: int  # arrival order (the seed is 0)
    island: int = 0
    parent: str | None = None  # the program it came from (the original, not a copy)
    generation: int = 0
    mutator: str = ""
    model: str | None = None
    status: str = "evaluating"  # "evaluating" | "accepted" | "rejected"
    reason: str | None = None
    message: str = ""
    # the verdict's figures (before it, only ``interpreter``: the run's)
    metrics: Metrics = field(default_factory=Metrics)
    advice_ids: tuple[str, ...] = ()
    description: str = ""
    diff: str = ""
    new_best: bool = False  # it was taken as the best when it was evaluated
    improved: bool = False
    is_best: bool = False  # the current best (one row at a time)
    # faster than the best of the moment but not by the noise margin: that margin, in %
    within_noise_pct: float | None = None
    parent_copy: str | None = None  # the parent's copy in another island, when it was one


@dataclass(frozen=True)
class AdviceItem:
    id: str
    text: str
    status: str = "proposed"
    kind: str = "general"
    tags: tuple[str, ...] = ()
    win_rate: float | None = None
    shown: int = 0


@dataclass(frozen=True)
class AdviceView:
    """The advice retrieved for the latest mutation that asked for some."""

    candidate_id: str | None
    items: tuple[AdviceItem, ...] = ()
    note: str = ""  # why there is none


@dataclass(frozen=True)
class FitnessView:
    """Every evaluation and the best so far, against the evaluation count.

    ``metric`` is "speedup" (× vs eager, higher is better; on a GPU) or "time" (interpreter
    wall time in ms, lower is better; on the CPU). ``points`` holds one (x, y) per
    evaluation, y None for a rejected one; ``best`` the (x, y) where the best changed."""

    metric: str = "speedup"
    points: tuple[tuple[int, float | None], ...] = ()
    best: tuple[tuple[int, float], ...] = ()
    refs: tuple[tuple[str, float], ...] = ()  # ("eager", 1.0), ("torch.compile", 1.7)


@dataclass(frozen=True)
class StatusView:
    task: str = ""
    device: str = ""
    device_name: str = ""
    arch: str | None = None
    interpreter: bool = False
    backend: str = "triton"
    mutator: str = ""
    model: str | None = None
    iterations: int = 0
    generation: int = 0
    evaluated: int = 0
    accepted: int = 0
    rejected: int = 0
    in_flight: int = 0
    evals_per_minute: float = 0.0
    tokens_per_s: float = 0.0
    best: CandidateRow | None = None
    message: str = ""  # the latest engine message worth showing (never a stale state)
    level: str = "info"
    failed_answers: int = 0  # mutations that gave no child (no code, duplicates, bad edits)
    failures_by_kind: tuple[tuple[str, int], ...] = ()
    answers: int = 0  # mutations asked for: children proposed plus failed ones
    outcome: str | None = None  # set once the run finished
    outcome_message: str = ""
    run_dir: str | None = None
    started: bool = False


@dataclass(frozen=True)
class Notice:
    message: str
    level: str = "info"  # "info" | "warning" | "error"


@dataclass(frozen=True)
class Frame:
    """What changed since the previous frame (``status`` is always the current one)."""

    seq: int
    status: StatusView
    rows: tuple[CandidateRow, ...] = ()
    fitness: FitnessView | None = None
    advice: AdviceView | None = None
    llm: str = ""  # text to append to the LLM panel
    notices: tuple[Notice, ...] = ()
    finished: bool = False


# ---- formatting ------------------------------------------------------------------------------


def fmt_time(ms: float | None, interpreter: bool) -> str:
    """Interpreter wall times in ms; kernel times in µs below a millisecond."""
    if ms is None:
        return "—"
    if interpreter or ms >= 1.0:
        return f"{ms:.1f} ms" if ms < 1000 else f"{ms / 1000:.2f} s"
    return f"{ms * 1000:.1f} µs"


def fmt_x(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}×"


def fmt_pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.0f} %"


def model_label(mutator: str, model: str | None) -> str:
    """The run's mutator for the status line."""
    if mutator == "param" or not model:
        return NO_MODEL if mutator in ("param", "") else mutator
    if mutator == "mixed":
        return f"mixed: {model} + param"
    return f"{mutator}: {model}"


def maker_cell(row: CandidateRow) -> str:
    """Who made a candidate, for the table: seed, param or the model's name."""
    if row.mutator == "llm" and row.model:
        return row.model
    return row.mutator or "?"


def status_cell(row: CandidateRow) -> str:
    if row.status == "rejected":
        return row.reason or "rejected"
    if row.status == "accepted":
        if row.is_best:
            return "★ best"
        if row.new_best:
            return "former best"
        if row.within_noise_pct is not None:
            return f"within noise {row.within_noise_pct:.1f} %"
        return "accepted"
    return row.status


def noise_note(row: CandidateRow) -> str:
    """Why a faster candidate is not the best, in words (the details screen)."""
    if row.within_noise_pct is None:
        return ""
    return (f"faster than the best of the moment, but by less than the noise margin of "
            f"{row.within_noise_pct:.1f} % (max(1 %, 3 × the larger measured spread)): "
            "not taken as the best")


def failures_label(s: StatusView, limit: int = 3) -> str:
    """"4 of 9 answers unusable (duplicate 2, no_code 2)"; ``limit`` kinds at most (0: none
    named); "" when none failed."""
    if not s.failed_answers:
        return ""
    of = f" of {s.answers}" if s.answers >= s.failed_answers else ""
    text = f"{s.failed_answers}{of} answers unusable"
    if limit <= 0:
        return text
    kinds = ", ".join(f"{k} {n}" for k, n in s.failures_by_kind[:limit])
    more = ", …" if len(s.failures_by_kind) > limit else ""
    return f"{text} ({kinds}{more})"


def best_summary(row: CandidateRow | None, compact: bool = False) -> str:
    if row is None:
        return "best —"
    m = row.metrics
    if m.interpreter or m.speedup_eager is None:
        return f"best {row.id} {fmt_time(m.time_ms, m.interpreter)}" + (
            " (interpreter wall time)" if m.interpreter else "")
    if compact:
        return (f"best {row.id} {fmt_time(m.time_ms, False)} · "
                f"{fmt_x(m.speedup_eager)} eager · {fmt_x(m.speedup_compile)} compile")
    parts = [f"best {row.id} {fmt_time(m.time_ms, False)}",
             f"{fmt_x(m.speedup_eager)} vs eager",
             f"{fmt_x(m.speedup_compile)} vs torch.compile"]
    if m.roofline_pct is not None:
        parts.append(f"{fmt_pct(m.roofline_pct)} of roofline")
    return " · ".join(parts)


def device_label(s: StatusView) -> str:
    if s.interpreter:
        return f"{s.device or 'cpu'} ({INTERPRETER_NOTE})"
    name = f" {s.device_name}" if s.device_name else ""
    arch = f" {s.arch}" if s.arch else ""
    return f"{s.device}{name}{arch}".strip()
