"""The TUI's engine subscriber: fold events into views, hand out one frame per refresh.

``EventFeed.on_event`` is what the engine calls (on the subscriber thread the engine gives a
plain callable, so a slow UI never holds the engine up). It only updates a few dicts under a
lock. The app's refresh timer calls ``take()`` (10 times a second by default), which returns
one immutable ``Frame`` with everything that changed since the previous call, or None when
nothing did: however many events arrive, the UI redraws at most once per tick.

No Textual here: the feed is plain Python and is tested without a terminal.
"""

from __future__ import annotations

import re
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from evotui.core.metrics import Metrics
from evotui.engine.events import (
    AdviceRetrieved,
    CandidateEvaluated,
    CandidateProposed,
    Event,
    GenerationDone,
    LLMChunk,
    RunFinished,
    RunStarted,
    Status,
)
from evotui.tui.views import (
    AdviceItem,
    AdviceView,
    CandidateRow,
    FitnessView,
    Frame,
    Notice,
    StatusView,
)

TOKEN_WINDOW_S = 5.0
LLM_BUFFER_CHARS = 20_000  # per candidate waiting for its turn in the LLM panel
MAX_NOTICES = 50
MESSAGE_TTL_S = 30.0  # an info or warning message leaves the status line after this
# "c0007: llm mutation of c0003 failed (duplicate): the answer is a program already evaluated"
FAILED_MUTATION = re.compile(r"^(\S+): (\w+) mutation of (\S+) failed \(([^)]*)\)(?:: (.*))?",
                             re.S)
# what the status line shows from the engine's state itself (paused, stopping): never as text
STATE_MESSAGES = ("paused", "resumed", "stopping")
SEED_MESSAGE = "evaluating the seed"
# a child is the new best only when faster by max(MIN_GAIN, SPREAD_FACTOR × spread)
# (``RunState.beats``, with the engine's default settings)
MIN_GAIN, SPREAD_FACTOR = 0.01, 3.0


def _advice_item(view: dict[str, Any]) -> AdviceItem:
    tags = view.get("tags") or ()
    return AdviceItem(
        id=str(view.get("id", "?")), text=str(view.get("text", "")),
        status=str(view.get("status") or "proposed"), kind=str(view.get("kind") or "general"),
        tags=tuple(str(t) for t in tags), win_rate=view.get("win_rate"),
        shown=int(view.get("shown") or 0))


class EventFeed:
    def __init__(self, clock: Callable[[], float] = time.time, backend: str = "triton") -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._seq = 0
        self._status = StatusView(backend=backend)
        self._rows: dict[str, CandidateRow] = {}
        self._changed: dict[str, None] = {}  # ordered set of ids changed since the last take
        self._points: list[tuple[int, float | None]] = []
        self._best_line: list[tuple[int, float]] = []
        self._refs: dict[str, float] = {}
        self._metric: str | None = None
        self._fitness_dirty = False
        self._advice = AdviceView(None)
        self._advice_dirty = False
        self._notices: list[Notice] = []
        self._llm_out: list[str] = []
        self._llm_focus: str | None = None
        self._llm_waiting: dict[str, list[str]] = {}
        self._llm_ended: set[str] = set()
        self._llm_last = ""  # the last character handed out (a header starts a new line)
        self._chunk_times: deque[float] = deque()
        self._started_t: float | None = None
        self._finished_t: float | None = None
        self._evaluated_at_start = 0
        self._finished = False
        self._finished_sent = False
        self._dirty = True
        self._last_status: StatusView | None = None
        self._message_t: float | None = None
        self._best_id: str | None = None
        self._failures: dict[str, int] = {}

    # ---- the subscriber ----------------------------------------------------------------------
    def on_event(self, ev: Event) -> None:
        with self._lock:
            self._apply(ev)

    def __call__(self, ev: Event) -> None:
        self.on_event(ev)

    def _apply(self, ev: Event) -> None:
        self._dirty = True
        if isinstance(ev, LLMChunk):
            self._chunk(ev)
        elif isinstance(ev, CandidateProposed):
            self._proposed(ev)
        elif isinstance(ev, CandidateEvaluated):
            self._evaluated(ev)
        elif isinstance(ev, AdviceRetrieved):
            self._advice = AdviceView(ev.candidate_id, tuple(_advice_item(a) for a in ev.advice))
            self._advice_dirty = True
        elif isinstance(ev, GenerationDone):
            self._status = replace(self._status, generation=ev.generation)
        elif isinstance(ev, Status):
            self._status_event(ev)
        elif isinstance(ev, RunStarted):
            self._started(ev)
        elif isinstance(ev, RunFinished):
            self._finished = True
            self._finished_t = ev.t
            self._message_t = None  # the outcome stays
            self._status = replace(self._status, outcome=ev.outcome,
                                   outcome_message=ev.message, message=ev.message,
                                   level="error" if ev.outcome == "failed" else "info",
                                   run_dir=ev.run_dir or self._status.run_dir)

    def _status_event(self, ev: Status) -> None:
        text = ev.message.strip()
        failed = FAILED_MUTATION.match(text)
        if failed:  # counted in the status line and the LLM panel, never a toast
            self._failed_answer(failed)
            return
        self._notices.append(Notice(text, ev.level))
        del self._notices[:-MAX_NOTICES]
        if text.startswith(STATE_MESSAGES) and ev.level == "info":
            return  # the status line shows the state from the engine itself
        self._status = replace(self._status, message=text.splitlines()[0] if text else "",
                               level=ev.level)
        self._message_t = ev.t

    def _failed_answer(self, m: re.Match[str]) -> None:
        cid, kind, why = m.group(1), m.group(4) or "unknown", (m.group(5) or "").strip()
        self._failures[kind] = self._failures.get(kind, 0) + 1
        s = self._status
        self._status = replace(
            s, failed_answers=s.failed_answers + 1, answers=s.answers + 1,
            failures_by_kind=tuple(sorted(self._failures.items(), key=lambda kv: -kv[1])))
        why = why.splitlines()[0][:160] if why else ""
        note = f"✗ {cid}: no child ({kind}){': ' + why if why else ''}\n"
        buf = self._llm_waiting.get(cid)
        if buf is None and self._llm_focus not in (None, cid):
            buf = self._llm_waiting[cid] = []  # after the stream shown now, not inside it
        if buf is None:
            buf = self._llm_out
        last = (buf[-1][-1:] if buf else self._llm_last if buf is self._llm_out else "") or "\n"
        buf.append(note if last == "\n" else "\n" + note)
        self._end_stream(cid)

    def _started(self, ev: RunStarted) -> None:
        self._started_t = ev.t
        self._evaluated_at_start = ev.evaluated
        self._status = replace(
            self._status, task=ev.task, device=ev.device, device_name=ev.device_name,
            arch=ev.arch, interpreter=ev.interpreter, mutator=ev.mutator, model=ev.model,
            iterations=ev.iterations, run_dir=ev.run_dir, evaluated=ev.evaluated, started=True)
        if ev.interpreter:
            self._metric = "time"
        if ev.mutator == "param":
            self._llm_out.append("no model (param mutator)\n")

    def _proposed(self, ev: CandidateProposed) -> None:
        origin = ev.parent_origin or ev.parent_id
        self._rows[ev.id] = CandidateRow(
            id=ev.id, order=len(self._rows), island=ev.island, parent=origin,
            generation=ev.generation, mutator=ev.mutator, model=ev.model,
            description=ev.description, diff=ev.diff, advice_ids=tuple(ev.advice_ids),
            metrics=Metrics(interpreter=self._status.interpreter),
            parent_copy=ev.parent_id if ev.parent_id and ev.parent_id != origin else None)
        self._changed[ev.id] = None
        s = self._status
        self._status = replace(s, in_flight=s.in_flight + 1,
                               answers=s.answers + (ev.mutator != "seed"))
        self._end_stream(ev.id)

    def _evaluated(self, ev: CandidateEvaluated) -> None:
        old = self._rows.get(ev.id)
        row = old or CandidateRow(id=ev.id, order=len(self._rows), parent=ev.parent_id)
        row = replace(row, status="accepted" if ev.accepted else "rejected", reason=ev.reason,
                      message=ev.message, metrics=ev.metrics, new_best=ev.new_best,
                      improved=ev.improved)
        self._rows[ev.id] = row
        self._changed[ev.id] = None
        self._end_stream(ev.id)
        s = self._status
        counts: dict[str, Any] = {}
        if old is not None and old.status == "evaluating":
            counts["in_flight"] = max(0, s.in_flight - 1)
        if row.mutator != "seed":
            counts.update(evaluated=s.evaluated + 1, **self._verdicts())
        if row.mutator == "seed" and s.message.startswith(SEED_MESSAGE):
            counts["message"] = ""
        row = self._against_best(row)
        if ev.new_best:
            counts["best"] = row
        self._rows[ev.id] = row
        self._status = replace(s, **counts)
        self._add_point(row)

    def _verdicts(self) -> dict[str, int]:
        """The children accepted and rejected, counted from the rows (never kept beside
        them); the seed and generation-0 attempts are not children."""
        statuses = [r.status for r in self._rows.values() if r.mutator != "seed"]
        return {"accepted": statuses.count("accepted"), "rejected": statuses.count("rejected")}

    def _against_best(self, row: CandidateRow) -> CandidateRow:
        """Mark the one current best (the former one loses its mark), or how much faster a
        candidate that is not the best would have had to be."""
        best = self._rows.get(self._best_id) if self._best_id else None
        if row.new_best:
            if best is not None and best.id != row.id:
                self._rows[best.id] = replace(best, is_best=False)
                self._changed[best.id] = None
            self._best_id = row.id
            return replace(row, is_best=True, within_noise_pct=None)
        new, old = row.metrics, best.metrics if best is not None else None
        if (row.status == "accepted" and old is not None and old.time_ms and new.time_ms
                and new.time_ms < old.time_ms):
            spread = max(new.spread_pct or 0.0, old.spread_pct or 0.0)
            margin = max(MIN_GAIN, SPREAD_FACTOR * spread / 100) * 100
            return replace(row, within_noise_pct=round(margin, 2))
        return row

    def _add_point(self, row: CandidateRow) -> None:
        m = row.metrics
        if self._metric is None and row.status == "accepted":
            self._metric = ("speedup" if m.speedup_eager is not None and not m.interpreter
                            else "time")
        metric = self._metric or "time"
        y = None
        if row.status == "accepted":
            y = m.speedup_eager if metric == "speedup" else m.time_ms
        x = len(self._points)
        self._points.append((x, y))
        if row.new_best and y is not None:
            self._best_line.append((x, y))
        if metric == "speedup" and m.speedup_eager and m.speedup_compile:
            self._refs = {"eager": 1.0, "torch.compile": m.speedup_eager / m.speedup_compile}
        self._fitness_dirty = True

    # ---- the LLM stream: one candidate at a time ----------------------------------------------
    def _chunk(self, ev: LLMChunk) -> None:
        self._chunk_times.append(ev.t)
        cid = ev.candidate_id
        if self._llm_focus is None:
            self._focus(cid)
        if cid == self._llm_focus:
            self._llm_out.append(ev.text)
        else:
            buf = self._llm_waiting.setdefault(cid, [])
            if sum(map(len, buf)) < LLM_BUFFER_CHARS:
                buf.append(ev.text)

    def _focus(self, cid: str) -> None:
        self._llm_focus = cid
        model = self._status.model or "model"
        last = (self._llm_out[-1][-1:] if self._llm_out else self._llm_last) or "\n"
        lead = "" if last == "\n" else "\n"
        self._llm_out.append(f"{lead}── {cid} ({model}) ──\n")
        self._llm_out.extend(self._llm_waiting.pop(cid, []))

    def _end_stream(self, cid: str) -> None:
        """``cid``'s answer is complete (or failed): the panel moves on to the next stream,
        replaying in order what the others streamed meanwhile."""
        self._llm_ended.add(cid)
        if cid != self._llm_focus:
            return
        self._llm_focus = None
        while self._llm_waiting:
            nxt = next(iter(self._llm_waiting))
            self._focus(nxt)
            if nxt not in self._llm_ended:
                return
            self._llm_focus = None

    # ---- what the UI calls -------------------------------------------------------------------
    def set_backend(self, name: str) -> None:
        with self._lock:
            self._status = replace(self._status, backend=name)
            self._dirty = True

    def note(self, message: str, level: str = "info") -> None:
        """A message from the UI itself (shown like the engine's)."""
        with self._lock:
            self._notices.append(Notice(message, level))
            self._dirty = True

    def mark_advice(self, advice_id: str, status: str) -> None:
        """The human accepted or vetoed a piece of advice: show it at once."""
        with self._lock:
            items = tuple(replace(a, status=status) if a.id == advice_id else a
                          for a in self._advice.items)
            self._advice = replace(self._advice, items=items)
            self._advice_dirty = self._dirty = True

    def row(self, cid: str) -> CandidateRow | None:
        with self._lock:
            return self._rows.get(cid)

    def rows(self) -> list[CandidateRow]:
        with self._lock:
            return list(self._rows.values())

    @property
    def finished(self) -> bool:
        return self._finished

    def status(self) -> StatusView:
        with self._lock:
            return self._current_status()

    def _current_status(self) -> StatusView:
        now = self._clock()
        while self._chunk_times and self._chunk_times[0] < now - TOKEN_WINDOW_S:
            self._chunk_times.popleft()
        tps = len(self._chunk_times) / TOKEN_WINDOW_S
        s = self._status
        if (s.message and s.level != "error" and self._message_t is not None
                and now - self._message_t > MESSAGE_TTL_S):
            s = self._status = replace(s, message="")
        epm = 0.0
        if self._started_t is not None:
            end = self._finished_t if self._finished_t is not None else now
            minutes = max(end - self._started_t, 1e-9) / 60
            done = s.evaluated - self._evaluated_at_start
            epm = done / minutes if done else 0.0
        return replace(s, tokens_per_s=round(tps, 1), evals_per_minute=round(epm, 1))

    def take(self) -> Frame | None:
        """Everything that changed since the previous call, or None if nothing did."""
        with self._lock:
            status = self._current_status()
            if not self._dirty and status == self._last_status:
                return None
            self._seq += 1
            rows = tuple(self._rows[c] for c in self._changed)
            fitness = None
            if self._fitness_dirty:
                fitness = FitnessView(self._metric or "time", tuple(self._points),
                                      tuple(self._best_line), tuple(self._refs.items()))
            advice = self._advice if self._advice_dirty else None
            llm = "".join(self._llm_out)
            self._llm_last = llm[-1:] or self._llm_last
            frame = Frame(
                seq=self._seq, status=status, rows=rows, fitness=fitness, advice=advice,
                llm=llm, notices=tuple(self._notices),
                finished=self._finished and not self._finished_sent)
            self._changed.clear()
            self._llm_out.clear()
            self._notices.clear()
            self._fitness_dirty = self._advice_dirty = self._dirty = False
            self._finished_sent = self._finished_sent or self._finished
            self._last_status = status
            return frame
