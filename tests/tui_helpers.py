"""Stand-ins for the TUI tests: a fixed run as events (for snapshots) and a controller that
needs no engine; a real engine over stand-ins is in ``tests.tui_engine``."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

from evotui.core.metrics import Metrics
from evotui.engine.events import (
    AdviceRetrieved,
    CandidateEvaluated,
    CandidateProposed,
    Command,
    Event,
    GenerationDone,
    LLMChunk,
    Pause,
    Resume,
    RunStarted,
    Status,
    Stop,
)
from evotui.engine.patch import diff_text
from evotui.tui.controller import CandidateInfo, Controller, NothingToExport
from tests.engine_helpers import SOFTMAX_SEED

T0 = 1_700_000_000.0  # a fixed wall clock for deterministic views


def aio(fn: Callable[..., Coroutine[Any, Any, Any]]) -> Callable[..., Any]:
    """Run an async test with ``asyncio.run`` (no async pytest plugin needed)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return asyncio.run(fn(*args, **kwargs))

    return wrapper


def warps_of(source: str) -> int:
    return next(int(x.split("=")[1]) for x in source.splitlines()
                if x.startswith("NUM_WARPS = "))


def set_warps(source: str, warps: int) -> str:
    lines = source.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("NUM_WARPS = "):
            lines[i] = f"NUM_WARPS = {warps}"
    return "\n".join(lines) + "\n"


# ---- a fixed run, as events -------------------------------------------------------------------
def _variant(source: str, warps: int) -> str:
    return source.replace("NUM_WARPS = 8", f"NUM_WARPS = {warps}")


ADVICE = (
    {"id": "a1b2c3d4", "text": "Keep the whole row in one block when it fits: one pass, no "
     "second read of x.", "status": "accepted", "win_rate": 0.5, "shown": 4},
    {"id": "e5f6a7b8", "text": "Fewer warps help short rows: try num_warps 4.",
     "status": "proposed", "win_rate": None, "shown": 0},
    {"id": "c9d0e1f2", "text": "Use exp2 with a log2(e) scale instead of exp.",
     "status": "authored", "win_rate": 0.25, "shown": 8},
)


def fixed_events(gpu: bool = True) -> list[Event]:
    """A short run of softmax: seed, five children (one rejected), advice, a model stream."""
    t = T0
    ev: list[Event] = [RunStarted(
        task="softmax", task_path="sample_kernels/softmax", device="cuda:0" if gpu else "cpu",
        interpreter=not gpu, mutator="llm", model="qwen2.5-coder:7b", iterations=20,
        run_dir="/tmp/evotui-run", device_name="NVIDIA H200" if gpu else "",
        arch="sm_90" if gpu else None, t=t)]
    ev.append(CandidateProposed(id="c0001", parent_id=None, island=0, generation=0,
                                mutator="seed", model=None, description="seed", diff="", t=t))
    base = 0.281 if gpu else 24.0
    ev.append(CandidateEvaluated(id="c0001", accepted=True, reason="accepted", message="ok",
                                 metrics=Metrics(
                                     time_ms=base, spread_pct=0.3,
                                     speedup_eager=1.0 if gpu else None,
                                     speedup_compile=0.54 if gpu else None,
                                     roofline_pct=45.0 if gpu else None, interpreter=not gpu),
                                 new_best=True, t=t))
    plan = [("c0005", 4, 0.82, True), ("c0006", 2, None, False), ("c0007", 16, 1.05, False),
            ("c0008", 4, 0.64, True), ("c0009", 1, 1.3, False)]
    parent, parent_src = "c0001", SOFTMAX_SEED
    for i, (cid, warps, ratio, best) in enumerate(plan):
        src = _variant(SOFTMAX_SEED, warps)
        ev.append(AdviceRetrieved(cid, ADVICE, t=t))
        for piece in ["Set ", "NUM_WARPS ", f"to {warps}", " to ", "balance the row."]:
            ev.append(LLMChunk(cid, piece, t=t))
        ev.append(CandidateProposed(id=cid, parent_id=parent, island=i % 2, generation=i // 2,
                                    mutator="llm", model="qwen2.5-coder:7b",
                                    description=f"NUM_WARPS 8 → {warps}",
                                    diff=diff_text(parent_src, src, parent, cid),
                                    advice_ids=("a1b2c3d4", "e5f6a7b8"), t=t))
        if ratio is None:
            ev.append(CandidateEvaluated(id=cid, accepted=False, reason="mismatch",
                                         message="output differs from the reference at 12 "
                                         "of 4096 elements",
                                         metrics=Metrics(interpreter=not gpu), t=t))
            continue
        time_ms = base * ratio
        ev.append(CandidateEvaluated(
            id=cid, accepted=True, reason="accepted", message="ok", metrics=Metrics(
                time_ms=time_ms, spread_pct=0.4, speedup_eager=base / time_ms if gpu else None,
                speedup_compile=0.152 / time_ms if gpu else None,
                roofline_pct=45.0 * base / time_ms if gpu else None, interpreter=not gpu),
            new_best=best, improved=best, parent_id=parent, t=t))
        if best:
            parent, parent_src = cid, src
    ev.append(GenerationDone(generation=2, evaluated=5, accepted=4, rejected=1,
                             best_id="c0008", best=Metrics(
                                 time_ms=base * 0.64, speedup_eager=1 / 0.64,
                                 speedup_compile=0.152 / 0.18, roofline_pct=70.0),
                             evals_per_minute=12.0, llm_calls=5,
                             llm_failures=0, prompt_tokens=5000, completion_tokens=400, t=t))
    ev.append(Status("hint added for the next mutations: try BLOCK 1024", t=t))
    return ev


# (id, parent as the engine names it, its origin, NUM_WARPS, time ratio to the seed or a
# failure kind, new best); the copies c0002–c0004 are the seed's on islands 1–3
MESSY_PLAN = (
    ("c0005", "c0001", "c0001", 4, 0.82, True),
    ("c0006", "c0005", "c0005", 2, "no_code", False),
    ("c0007", "c0003", "c0001", 16, 1.05, False),
    ("c0008", "c0005", "c0005", 4, "duplicate", False),
    ("c0009", "c0005", "c0005", 2, 0.64, True),
    ("c0010", "c0009", "c0009", 2, "patch_failed", False),
    ("c0011", "c0009", "c0009", 1, None, False),
    ("c0012", "c0009", "c0009", 2, "syntax_error", False),
    ("c0013", "c0009", "c0009", 8, 0.637, False),
    ("c0014", "c0007", "c0007", 2, "no_code", False),
    ("c0015", "c0009", "c0009", 4, "evaluating", False),
    ("c0016", "c0013", "c0013", 4, "duplicate", False),
)
WHY = {"no_code": "the answer holds no code block",
       "duplicate": "the answer is a program already evaluated",
       "patch_failed": "SEARCH block 1 does not match the parent",
       "syntax_error": "syntax error: '(' was never closed (line 31)"}


def messy_events(gpu: bool = True) -> list[Event]:
    """A softmax run under a model that fails half its answers (no code, duplicates, broken
    edits): one current best and a former one, a child within the noise margin, a child of
    an island's copy of the seed, a rejected one, one still being evaluated."""
    t = T0
    model = "qwen2.5-coder:7b"
    ev: list[Event] = [RunStarted(
        task="softmax", task_path="sample_kernels/softmax", device="cuda:0" if gpu else "cpu",
        interpreter=not gpu, mutator="llm", model=model, iterations=30,
        run_dir="/tmp/evotui-run", device_name="NVIDIA H200" if gpu else "",
        arch="sm_90" if gpu else None, t=t)]
    ev.append(CandidateProposed(id="c0001", parent_id=None, island=0, generation=0,
                                mutator="seed", model=None, description="seed", diff="", t=t))
    ev.append(Status(f"evaluating the seed c0001 on {'cuda:0' if gpu else 'cpu'}", t=t))
    base = 0.281 if gpu else 24.0

    def verdict(cid: str, ratio: float, parent: str | None, best: bool) -> CandidateEvaluated:
        time_ms = base * ratio
        return CandidateEvaluated(
            id=cid, accepted=True, reason="accepted", message="ok", metrics=Metrics(
                time_ms=time_ms, spread_pct=0.4, speedup_eager=base / time_ms if gpu else None,
                speedup_compile=0.152 / time_ms if gpu else None,
                roofline_pct=45.0 * base / time_ms if gpu else None, interpreter=not gpu,
                wall_s=2.4),
            new_best=best, improved=best, parent_id=parent, t=t)

    ev.append(verdict("c0001", 1.0, None, True))
    sources = {"c0001": SOFTMAX_SEED}
    for i, (cid, parent, origin, warps, outcome, best) in enumerate(MESSY_PLAN):
        t += 1
        parent_src = sources[origin]
        src = set_warps(parent_src, warps)
        ev.append(AdviceRetrieved(cid, ADVICE, t=t))
        for piece in [f"Set NUM_WARPS to {warps}", " so each row ", "keeps the SMs busy.\n"]:
            ev.append(LLMChunk(cid, piece, t=t))
        if outcome in WHY:
            ev.append(Status(f"{cid}: llm mutation of {parent} failed ({outcome}): "
                             f"{WHY[outcome]}", "warning", t=t))
            continue
        sources[cid] = src
        ev.append(CandidateProposed(
            id=cid, parent_id=parent, island=1 if parent == "c0003" else i % 2,
            generation=i // 4, mutator="llm", model=model,
            description=f"NUM_WARPS {warps_of(parent_src)} → {warps}",
            diff=diff_text(parent_src, src, origin, cid), advice_ids=("a1b2c3d4", "e5f6a7b8"),
            parent_origin=origin, t=t))
        if outcome is None:
            ev.append(CandidateEvaluated(id=cid, accepted=False, reason="mismatch",
                                         message="output differs from the reference at 12 "
                                         "of 4096 elements",
                                         metrics=Metrics(interpreter=not gpu),
                                         parent_id=parent, t=t))
        elif outcome != "evaluating":
            ev.append(verdict(cid, float(outcome), parent, best))
    ev.append(GenerationDone(generation=2, evaluated=6, accepted=4, rejected=1,
                             best_id="c0009", best=Metrics(
                                 time_ms=base * 0.64, speedup_eager=1 / 0.64,
                                 speedup_compile=0.152 / 0.18, roofline_pct=70.0),
                             evals_per_minute=6.0, llm_calls=12,
                             llm_failures=6, prompt_tokens=12000, completion_tokens=900, t=t))
    ev.append(Status("migration: c0009→island 1", t=t))
    return ev


class FakeController(Controller):
    """A run without an engine: commands are recorded, the advice library is a dict."""

    def __init__(self, run_dir: Path | None = None) -> None:
        self.sent: list[Command] = []
        self._running = True
        self._paused = False
        self._stopping = False
        self.advice: dict[str, dict[str, Any]] = {a["id"]: dict(a) for a in ADVICE}
        self._run_dir = run_dir
        self._callbacks: list[Any] = []

    @property
    def running(self) -> bool:
        return self._running

    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def stopping(self) -> bool:
        return self._stopping

    @property
    def run_dir(self) -> Path | None:
        return self._run_dir

    def send(self, command: Command) -> bool:
        if not self._running:
            return False
        self.sent.append(command)
        if isinstance(command, Pause):
            self._paused = True
        elif isinstance(command, Resume):
            self._paused = False
        elif isinstance(command, Stop):
            self._stopping = True
        return True

    def toggle_pause(self) -> bool | None:
        if not self._running:
            return None
        self.send(Resume() if self._paused else Pause())
        return self._paused

    def finish(self) -> None:
        self._running = False
        for fn in self._callbacks:
            fn()

    def add_finished_callback(self, fn: Any) -> None:
        self._callbacks.append(fn)

    def candidate(self, cid: str) -> CandidateInfo | None:
        return CandidateInfo(cid, SOFTMAX_SEED, "accepted")

    def export_best(self) -> tuple[str, Path]:
        if self._run_dir is None:
            raise NothingToExport("no run directory")
        path = self._run_dir / "best.py"
        path.write_text(SOFTMAX_SEED)
        return "c0008", path

    def accept_advice(self, advice_id: str) -> dict[str, Any]:
        self.advice[advice_id]["status"] = "accepted"
        return self.advice[advice_id]

    def veto_advice(self, advice_id: str) -> dict[str, Any]:
        self.advice[advice_id]["status"] = "vetoed"
        return self.advice[advice_id]

    def author_advice(self, text: str, **fields: Any) -> dict[str, Any]:
        self.advice["new00001"] = {"id": "new00001", "text": text, **fields}
        return self.advice["new00001"]
