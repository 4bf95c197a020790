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
            assert table.get_cell("c0001", "status")[0] in ("★ best", "accepted")
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
