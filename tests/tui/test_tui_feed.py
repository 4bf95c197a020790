"""The TUI's plain-Python parts: the feed (events → frames), the braille chart, the forms'
parsing, the host protocol, and that the engine's side never imports Textual."""

from __future__ import annotations

import subprocess
import sys

import pytest

from evotui.core.metrics import Metrics
from evotui.engine.events import (
    AdviceRetrieved,
    CandidateEvaluated,
    CandidateProposed,
    Event,
    Hint,
    LLMChunk,
    Pause,
    RunFinished,
    RunStarted,
    Status,
    Stop,
)
from evotui.engine.rundir import EVENTS, RunDir
from evotui.tui.chart import BEST, EVAL, REF_EAGER, BrailleCanvas, plot
from evotui.tui.feed import EventFeed
from evotui.tui.screens.new_advice import ConditionsError, parse_conditions
from evotui.tui.views import FitnessView, best_summary
from evotui.tui.wire import command_from_dict, command_to_dict, past_events, tee_events
from tests.conftest import ROOT
from tests.tui_helpers import T0, fixed_events


def started(gpu: bool = True, mutator: str = "llm") -> RunStarted:
    return RunStarted(task="softmax", task_path="x", device="cuda:0" if gpu else "cpu",
                      interpreter=not gpu, mutator=mutator, model="m" if mutator != "param"
                      else None, iterations=10, run_dir="/tmp/r", t=T0)


def test_a_frame_carries_what_changed_since_the_last_and_nothing_when_quiet():
    feed = EventFeed(clock=lambda: T0 + 60)
    for ev in fixed_events():
        feed.on_event(ev)
    frame = feed.take()
    assert frame is not None
    assert [r.id for r in frame.rows] == ["c0001", "c0005", "c0006", "c0007", "c0008", "c0009"]
    s = frame.status
    assert (s.evaluated, s.accepted, s.rejected, s.generation) == (5, 4, 1, 2)
    assert s.best is not None and s.best.id == "c0008" and s.in_flight == 0
    assert s.evals_per_minute == 5.0 and s.tokens_per_s == 0.0
    assert frame.fitness is not None and frame.fitness.metric == "speedup"
    assert [y is None for _, y in frame.fitness.points] == [False, False, True, False, False,
                                                            False]
    assert [x for x, _ in frame.fitness.best] == [0, 1, 4]
    assert dict(frame.fitness.refs)["eager"] == 1.0
    assert frame.advice is not None and frame.advice.candidate_id == "c0009"
    assert "── c0005 (qwen2.5-coder:7b) ──" in frame.llm
    assert feed.take() is None  # nothing new, same clock
    feed.on_event(CandidateProposed(id="c0010", parent_id="c0008", island=0, generation=3,
                                    mutator="llm", model="m", description="d", diff="+x"))
    frame = feed.take()
    assert [r.id for r in frame.rows] == ["c0010"] and frame.status.in_flight == 1
    assert frame.fitness is None and frame.advice is None


def test_a_flood_of_events_becomes_one_frame_with_each_row_once():
    feed = EventFeed(clock=lambda: T0)
    feed.on_event(started())
    for i in range(2000):
        cid = f"c{i % 50:04d}"
        feed.on_event(CandidateProposed(id=cid, parent_id=None, island=0, generation=0,
                                        mutator="llm", model="m", description="", diff=""))
        feed.on_event(CandidateEvaluated(id=cid, accepted=True, reason="accepted", message="",
                                         metrics=Metrics(time_ms=1.0 + i, speedup_eager=1.0)))
    frame = feed.take()
    assert len(frame.rows) == 50 and len({r.id for r in frame.rows}) == 50
    assert len(frame.fitness.points) == 2000


def test_interpreter_runs_plot_times_and_never_speedups():
    feed = EventFeed(clock=lambda: T0)
    for ev in fixed_events(gpu=False):
        feed.on_event(ev)
    frame = feed.take()
    assert frame.fitness.metric == "time" and frame.fitness.refs == ()
    assert "interpreter wall time" in best_summary(frame.status.best)
    assert "×" not in best_summary(frame.status.best)


def test_the_llm_panel_follows_one_stream_and_replays_the_others_in_order():
    feed = EventFeed(clock=lambda: T0)
    feed.on_event(started())
    feed.on_event(LLMChunk("c1", "a1 "))
    feed.on_event(LLMChunk("c2", "b1 "))
    feed.on_event(LLMChunk("c1", "a2 "))
    feed.on_event(LLMChunk("c2", "b2 "))
    assert feed.take().llm == "── c1 (m) ──\na1 a2 "
    feed.on_event(CandidateProposed(id="c1", parent_id=None, island=0, generation=0,
                                    mutator="llm", model="m", description="", diff=""))
    feed.on_event(LLMChunk("c2", "b3"))
    assert feed.take().llm == "\n── c2 (m) ──\nb1 b2 b3"
    # a failed mutation ("c3: ...") ends its stream as well
    feed.on_event(LLMChunk("c3", "x"))
    feed.on_event(Status("c2: llm mutation of c1 failed (no_code): nothing", "warning"))
    feed.on_event(LLMChunk("c3", "y"))
    assert feed.take().llm.endswith("── c3 (m) ──\nxy")


def test_status_notices_advice_marks_and_the_end_of_the_run():
    feed = EventFeed(clock=lambda: T0)
    feed.on_event(started(mutator="param"))
    frame = feed.take()
    assert "no model (param mutator)" in frame.llm
    feed.on_event(AdviceRetrieved("c2", ({"id": "a1", "text": "t", "status": "proposed"},)))
    feed.mark_advice("a1", "vetoed")
    feed.on_event(Status("engine error:\nTraceback...\nRuntimeError: x", "error"))
    feed.on_event(RunFinished(outcome="failed", message="engine error", evaluated=0,
                              best_id=None, run_dir="/tmp/r"))
    frame = feed.take()
    assert frame.advice.items[0].status == "vetoed"
    assert frame.notices[-1].level == "error" and frame.status.message == "engine error"
    assert frame.finished and frame.status.outcome == "failed"
    feed.on_event(Status("later", "info"))
    assert not feed.take().finished  # said once


def test_tokens_per_second_counts_chunks_in_the_last_seconds():
    now = [T0]
    feed = EventFeed(clock=lambda: now[0])
    feed.on_event(started())
    for i in range(50):
        feed.on_event(LLMChunk("c1", "t", t=T0 - 1 + i / 50))
    assert feed.status().tokens_per_s == 10.0  # 50 chunks in the 5 s window
    now[0] = T0 + 10
    assert feed.status().tokens_per_s == 0.0


def test_braille_canvas_and_plot():
    c = BrailleCanvas(2, 1)
    c.dot(EVAL, 0, 0)
    c.dot(BEST, 3, 3)
    c.dot(EVAL, 99, 99)  # outside: ignored
    (a, la), (b, lb) = c.cells()[0]
    assert (a, la) == ("⠁", EVAL) and (b, lb) == ("⢀", BEST)
    view = FitnessView("speedup", ((0, 1.0), (1, None), (2, 1.5), (3, 1.2)), ((0, 1.0), (2, 1.5)),
                       (("eager", 1.0), ("torch.compile", 1.8)))
    p = plot(view, 40, 8)
    assert p is not None and len(p.rows) == 7 and all(len(r) == 40 - len(p.y_labels[0])
                                                       for r in p.rows)
    layers = {layer for row in p.rows for _, layer in row}
    assert {EVAL, BEST, REF_EAGER} <= layers
    assert p.y_labels[0].strip().endswith("×") and p.x_label_right == "3 evaluations"
    assert plot(FitnessView("time", ((0, None),)), 40, 8) is None  # nothing accepted
    assert plot(view, 5, 8) is None  # no room


def test_conditions_field():
    assert parse_conditions("") == {}
    assert parse_conditions("dtypes=bf16,fp16; min_size=4096") == {
        "dtypes": ["bf16", "fp16"], "min_size": 4096}
    assert parse_conditions('{"archs": ["sm_90"]}') == {"archs": ["sm_90"]}
    for bad in ("dtypes", "[1]", "{nope"):
        with pytest.raises(ConditionsError):
            parse_conditions(bad)


def test_commands_cross_the_pipe_unchanged():
    for cmd in (Pause(), Stop(2.5), Hint("try this", 3)):
        assert command_from_dict(command_to_dict(cmd)) == cmd


def test_an_event_is_encoded_once_for_the_pipe_and_events_jsonl(tmp_path, monkeypatch):
    encoded: list[str] = []
    to_json = Event.to_json
    monkeypatch.setattr(Event, "to_json", lambda self: encoded.append(self.kind) or to_json(self))
    run_dir = RunDir(tmp_path / "run")
    sent: list[str] = []
    tee_events(run_dir, sent.append)
    events = [Status("hello"), LLMChunk("c0002", "def k"), *fixed_events()[:3]]
    for e in events:
        run_dir.log(e)
    run_dir.close()
    assert encoded == [e.kind for e in events]  # once each
    logged = (tmp_path / "run" / EVENTS).read_text().splitlines()
    assert sent == [e.to_json() for e in events]
    assert logged == [line for line, e in zip(sent, events, strict=True)
                      if not isinstance(e, LLMChunk)]  # model chunks: the UI only
    assert past_events(tmp_path / "run" / EVENTS) == [
        line for line in logged if '"candidate_evaluated"' in line or '"generation_done"' in line
        or '"c0001"' in line]


def test_the_engine_side_of_the_tui_never_imports_textual():
    code = ("import sys\n"
            "import evotui.tui, evotui.tui.host, evotui.tui.process, evotui.tui.feed, "
            "evotui.tui.controller, evotui.tui.wire, evotui.tui.chart, evotui.tui.views\n"
            "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))\n"
            "print(bad); sys.exit(1 if bad else 0)")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert p.returncode == 0, p.stdout + p.stderr
