"""The TUI over a real run, as ``evotui sample_kernels/softmax --device cpu --mutator param``
opens it: the engine in its host process, Triton's CPU interpreter, the parameter mutator,
3 iterations. Pilot watches the panels fill, then ``q`` ends it and the report is there."""

from __future__ import annotations

import json
import time

import pytest

from evotui.engine.session import RunOptions
from evotui.tui.app import create_app
from evotui.tui.feed import EventFeed
from evotui.tui.fitness import FitnessChart
from evotui.tui.llm import LLMPanel
from evotui.tui.process import EngineProcess
from evotui.tui.screens import ConfirmQuitScreen
from evotui.tui.status import StatusLine
from tests.conftest import ROOT, SAMPLES
from tests.tui_helpers import aio

pytestmark = [pytest.mark.timeout(240), pytest.mark.slow]


async def until(pilot, cond, timeout: float, what: str) -> None:
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.1)


@aio
async def test_a_real_cpu_run_fills_the_panels_and_q_writes_the_report(tmp_path, monkeypatch):
    monkeypatch.setenv("EVOTUI_HOME", str(tmp_path / "home"))
    out = tmp_path / "run"
    engine = EngineProcess(RunOptions(task=str(SAMPLES / "softmax"), device="cpu",
                                      mutator="param", iterations=3, out=str(out)),
                           env={"PYTHONPATH": str(ROOT)})
    feed = EventFeed()
    engine.start(feed.on_event, timeout=120)
    app = create_app(engine, feed, notes=engine.notes)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            table = app.population
            await until(pilot, lambda: table.row_count >= 2 and app.status.evaluated >= 1,
                        150, "the seed and a first child")
            status = app.query_one(StatusLine).text
            assert "softmax" in status and "CPU interpreter — times are not kernel speed" in status
            assert "param mutator (no model)" in status
            await until(pilot, lambda: app.query_one(FitnessChart).view is not None, 10,
                        "the fitness chart")
            assert "no model (param mutator)" in "\n".join(app.query_one(LLMPanel).lines)
            assert table.get_cell("c0001", "status")[0] in ("★ best", "former best")
            await pilot.press("q")
            await pilot.pause(0.3)
            if isinstance(app.screen, ConfirmQuitScreen):  # still running: confirm
                await pilot.press("y")
            await until(pilot, lambda: app.return_code is not None, 150, "the app to exit")
    finally:
        engine.close(60)
    assert app.return_code == 0
    report = json.loads((out / "report.json").read_text())
    assert report["task"] == "softmax" and report["interpreter"] and report["mutator"] == "param"
    assert report["evaluated"] >= 1 and report["best"] is not None
    assert (out / "events.jsonl").is_file() and (out / "engine.log").is_file()


def test_a_resumed_run_shows_the_candidates_of_its_earlier_sessions(tmp_path, monkeypatch):
    monkeypatch.setenv("EVOTUI_HOME", str(tmp_path / "home"))
    out = tmp_path / "run"
    common = dict(task=str(SAMPLES / "softmax"), device="cpu", mutator="param", memory_k=0)
    first = EngineProcess(RunOptions(iterations=2, out=str(out), **common),
                          env={"PYTHONPATH": str(ROOT)})
    first.start(timeout=120)
    assert first.join(150), "the first session did not finish"
    first.close(60)
    before = json.loads((out / "report.json").read_text())
    assert before["evaluated"] == 2
    past = [e["id"] for e in map(json.loads, (out / "events.jsonl").read_text().splitlines())
            if e["kind"] == "candidate_evaluated"]
    assert len(past) == 3  # the seed and two children

    # the feed sees the earlier candidates before the resumed run's own start
    order: list[str] = []
    feed = EventFeed()
    resumed = EngineProcess(RunOptions(iterations=3, resume=str(out), **common),
                            env={"PYTHONPATH": str(ROOT)})
    resumed.start(feed.on_event, lambda e: order.append(type(e).__name__), timeout=120)
    try:
        assert resumed.join(150), "the resumed session did not finish"
    finally:
        resumed.close(60)
    ids = [r.id for r in feed.rows()]
    # the earlier candidates first (replayed in id order; the live run showed them as they
    # finished, which two lanes can swap)
    assert sorted(ids[:3]) == sorted(past), ids
    assert len(ids) == 4 and all(r.status in ("accepted", "rejected") for r in feed.rows())
    head = order[:order.index("RunStarted")]  # the replay comes before the run's own start
    assert head.count("CandidateEvaluated") == 3 and head.count("CandidateProposed") == 3, order
    assert set(head) <= {"CandidateProposed", "CandidateEvaluated", "GenerationDone"}, head
    assert feed.status().evaluated == 3
