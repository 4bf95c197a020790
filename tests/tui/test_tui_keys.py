"""The TUI's key flows, driven by Pilot against a real engine in its host process (as
``evotui run`` has it) over stand-ins (an instant evaluator and a streaming scripted
mutator), with the real advice library in a temporary EVOTUI_HOME: pause/resume, author,
accept, veto, hint, export, details, palette, quit, and an engine crash shown in the UI."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable

import pytest
from textual.widgets import TextArea

from evotui.engine.events import AdviceRetrieved, Event
from evotui.memory.store import AdviceStore
from evotui.tui.app import EvotuiApp, create_app
from evotui.tui.feed import EventFeed
from evotui.tui.screens import CandidateScreen, ConfirmQuitScreen, HintScreen, NewAdviceScreen
from evotui.tui.status import StatusLine
from tests.tui_engine import stand_in_process
from tests.tui_helpers import aio

pytestmark = pytest.mark.timeout(60)
SIZE = (120, 36)


class Live:
    """A host process running the stand-in engine, and an app on it."""

    def __init__(self, run_dir, **kwargs) -> None:
        self.run_dir = run_dir
        self.runner = stand_in_process(self.run_dir, **kwargs)
        self.feed = EventFeed()
        self.events: list[Event] = []
        self.runner.start(self.feed.on_event, self.events.append, timeout=60)
        self.app: EvotuiApp = create_app(self.runner, self.feed)

    def new_app(self) -> Live:
        """Another app on the same run (the feed keeps what it knows so far)."""
        self.app = create_app(self.runner, self.feed)
        return self

    @property
    def evaluated(self) -> int:
        return self.feed.status().evaluated


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    home = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EVOTUI_HOME", str(home))
        yield home


@pytest.fixture(scope="module")
def shared(tmp_path_factory, home):
    """One long run for the flows that leave it running (startup costs ~3 s: the task
    imports torch)."""
    lv = Live(tmp_path_factory.mktemp("shared") / "run", delay=0.3, iterations=10**6)
    yield lv
    lv.runner.close(0.5)


@pytest.fixture
def live(shared):
    return shared.new_app()


@pytest.fixture
def own(tmp_path, home):
    """A run of one's own (for the flows that end it)."""
    made: list[Live] = []

    def make(**kwargs) -> Live:
        made.append(Live(tmp_path / "run", **kwargs))
        return made[-1]

    yield make
    for lv in made:
        lv.runner.close(30)


async def until(pilot, cond: Callable[[], object], timeout: float = 10.0, what: str = "") -> None:
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"timed out waiting for {what or cond}")
        await pilot.pause(0.05)


def status_text(app: EvotuiApp) -> str:
    return app.query_one(StatusLine).text


@aio
async def test_pause_and_resume(live):
    lv = live
    async with lv.app.run_test(size=SIZE) as pilot:
        start = lv.evaluated
        await until(pilot, lambda: lv.evaluated >= start + 2, what="evaluations")
        await pilot.press("space")
        await until(pilot, lambda: " paused " in status_text(lv.app), what="paused")
        assert lv.runner.paused
        # the in-flight iterations finish, and the status line says so from the engine's count
        await until(pilot, lambda: lv.runner.in_flight == 0
                    and "finish first" not in status_text(lv.app), what="in flight done")
        assert " paused " in status_text(lv.app)
        frozen = lv.evaluated
        await asyncio.sleep(0.5)
        assert lv.evaluated == frozen
        await pilot.press("space")
        await until(pilot, lambda: " running " in status_text(lv.app), what="running")
        await until(pilot, lambda: lv.evaluated > frozen, what="progress after resume")


@aio
async def test_author_new_advice_is_on_disk(live, home):
    lv = live
    async with lv.app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        await until(pilot, lambda: isinstance(lv.app.screen, NewAdviceScreen), what="form")
        screen = lv.app.screen
        assert screen.query_one("#dialog").border_title == "New advice"
        assert isinstance(lv.app.focused, TextArea) and lv.app.focused.id == "text"
        await pilot.press(*"Use")  # typed into the focused field
        lv.app.focused.insert(" tl.exp2 with a log2(e) scale for softmax")
        screen.query_one("#tags").value = "softmax, exp2"
        screen.query_one("#conditions").value = "dtypes=fp32,bf16; min_size=1024"
        await pilot.press("ctrl+s")
        await until(pilot, lambda: not isinstance(lv.app.screen, NewAdviceScreen), what="saved")
        text = "Use tl.exp2 with a log2(e) scale for softmax"

        def on_disk():
            return AdviceStore(cold_start=False).find_text(text)

        await until(pilot, on_disk, what="the advice in the library")
        advice = on_disk()
        assert advice.status == "authored" and set(advice.tags) >= {"softmax", "exp2"}
        assert advice.conditions == {"dtypes": ["fp32", "bf16"], "min_size": 1024}
        assert (home / "advice.json").is_file()
        # escape cancels without writing
        await pilot.press("n")
        await until(pilot, lambda: isinstance(lv.app.screen, NewAdviceScreen))
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(lv.app.screen, NewAdviceScreen))


@aio
async def test_accept_and_veto_reach_the_library_and_the_next_prompt(live):
    lv = live
    async with lv.app.run_test(size=SIZE) as pilot:
        advice = lv.app.advice
        await until(pilot, lambda: advice.row_count >= 2, what="retrieved advice")
        lv.app.population.focus()
        await pilot.pause()
        first = advice.highlighted_id
        before = AdviceStore(cold_start=False).get(first).status
        await pilot.press("a")  # from the Population panel: it selects the advice first
        await until(pilot, lambda: advice.has_focus, what="the Advice panel focused")
        assert AdviceStore(cold_start=False).get(first).status == before
        assert any("a again" in str(n.message) for n in lv.app._notifications)
        first = advice.highlighted_id
        await pilot.press("a")
        await until(pilot, lambda: AdviceStore(cold_start=False).get(first).status == "accepted",
                    what="accepted on disk")
        await pilot.press("down")
        second = advice.highlighted_id
        assert second != first
        await pilot.press("v")
        await until(pilot, lambda: AdviceStore(cold_start=False).get(second).status == "vetoed",
                    what="vetoed on disk")
        # the panel marks it at once (unless the next retrieval already left it out)
        await until(pilot, lambda: advice.item(second) is None
                    or advice.item(second).status == "vetoed", what="panel shows it")
        mark = len(lv.events)
        await until(pilot, lambda: sum(isinstance(e, AdviceRetrieved)
                                       for e in lv.events[mark:]) >= 4, what="new prompts")
    later = [a["id"] for e in lv.events[mark + 1:] if isinstance(e, AdviceRetrieved)
             for a in e.advice]
    assert second not in later


@aio
async def test_hint_reaches_the_next_prompt(live):
    lv = live
    async with lv.app.run_test(size=SIZE) as pilot:
        await pilot.press("h")
        await until(pilot, lambda: isinstance(lv.app.screen, HintScreen))
        lv.app.screen.query_one("#hint-text").value = "try BLOCK 1024 with two passes"
        await pilot.press("enter")
        await until(pilot, lambda: not isinstance(lv.app.screen, HintScreen))
        def in_a_prompt() -> bool:
            return any("try BLOCK 1024 with two passes" in p.read_text()
                       for p in (lv.run_dir / "llm").glob("*.md"))

        await until(pilot, in_a_prompt, what="the hint in a prompt")


@aio
async def test_export_writes_best_py(live):
    lv = live
    async with lv.app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: lv.feed.status().best is not None, what="a best candidate")
        await pilot.press("e")
        best = lv.run_dir / "best.py"
        await until(pilot, best.is_file, what="best.py")
        assert "class ModelNew" in best.read_text()
        await until(pilot, lambda: any(str(best) in str(n.message)
                                       for n in lv.app._notifications), what="says where")


@aio
async def test_details_and_palette(live):
    lv = live
    async with lv.app.run_test(size=SIZE) as pilot:
        table = lv.app.population
        await until(pilot, lambda: table.row_count >= 3, what="rows")
        table.focus()
        await pilot.press("enter")
        await until(pilot, lambda: isinstance(lv.app.screen, CandidateScreen), what="details")
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(lv.app.screen, CandidateScreen))
        await pilot.press("ctrl+p")
        await pilot.pause(0.2)
        await pilot.press(*"pause")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await until(pilot, lambda: lv.runner.paused, what="paused from the palette")
        await pilot.press("space")
        await until(pilot, lambda: not lv.runner.paused, what="resumed")


@aio
async def test_quit_confirms_stops_the_engine_and_writes_the_report(own):
    lv = own(delay=0.3)
    async with lv.app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: lv.evaluated >= 1, what="a first evaluation")
        await pilot.press("q")
        await until(pilot, lambda: isinstance(lv.app.screen, ConfirmQuitScreen), what="confirm")
        await pilot.press("n")  # keep running
        await until(pilot, lambda: not isinstance(lv.app.screen, ConfirmQuitScreen))
        assert lv.runner.running
        await pilot.press("q")
        await until(pilot, lambda: isinstance(lv.app.screen, ConfirmQuitScreen))
        await pilot.press("y")
        await until(pilot, lambda: lv.runner.finished, what="the engine to stop")
        await until(pilot, lambda: lv.app.return_code is not None, what="the app to exit")
    assert lv.app.return_code == 0
    report = json.loads((lv.run_dir / "report.json").read_text())
    assert report["outcome"] == "stopped" and report["evaluated"] >= 1


@aio
async def test_an_engine_crash_shows_in_the_ui(own):
    lv = own(broken=True)
    async with lv.app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: lv.runner.finished, what="the run to end")
        await until(pilot, lambda: " failed " in status_text(lv.app), what="failed status")
        messages = [str(n.message) for n in lv.app._notifications]
        assert any("engine error" in m and "the stand-in mutator broke" in m for m in messages)
        assert all("Traceback" not in m for m in messages)
        await pilot.press("q")  # the run is over: no confirmation
        await until(pilot, lambda: lv.app.return_code is not None)
    assert lv.app.return_code == 1
    assert (lv.run_dir / "report.json").is_file()
