"""The TUI under a model that fails half its answers: failures counted (in the status line
and the LLM panel, never as a stack of toasts), a status that says the engine's state now,
one current best, parents that name a row, two status lines at 80 columns, a quit dialog
whose count moves, ctrl+c asking to stop."""

from __future__ import annotations

import json

from rich.cells import cell_len

from evotui.engine.events import CandidateEvaluated, CandidateProposed, Status
from evotui.tui.app import create_app
from evotui.tui.feed import MESSAGE_TTL_S, EventFeed
from evotui.tui.screens import CandidateScreen, ConfirmQuitScreen
from evotui.tui.status import StatusLine, render_status
from evotui.tui.toasts import ToastGate
from evotui.tui.views import status_cell
from tests.tui_helpers import MESSY_PLAN, T0, FakeController, aio, messy_events

FAILED = [p[0] for p in MESSY_PLAN if isinstance(p[4], str) and p[4] != "evaluating"]


def messy_feed(gpu: bool = True, now: float = T0 + 20) -> EventFeed:
    clock = [now]
    feed = EventFeed(clock=lambda: clock[0])
    feed.clock = clock  # type: ignore[attr-defined]
    for ev in messy_events(gpu):
        feed.on_event(ev)
    return feed


def test_failed_answers_are_counted_not_toasted():
    feed = messy_feed()
    frame = feed.take()
    s = frame.status
    assert (s.failed_answers, s.answers) == (len(FAILED), len(MESSY_PLAN)) == (6, 12)
    assert dict(s.failures_by_kind) == {"no_code": 2, "duplicate": 2, "patch_failed": 1,
                                        "syntax_error": 1}
    assert not any("mutation of" in n.message for n in frame.notices)
    for cid in FAILED:  # each failure is said in the model's own panel
        assert f"✗ {cid}: no child (" in frame.llm
    assert "6 of 12 answers unusable (no_code 2, duplicate 2, patch_failed 1, …)" in \
        render_status(s, "running", width=200).plain


def test_one_current_best_former_bests_and_the_noise_margin():
    rows = {r.id: r for r in messy_feed().take().rows}
    assert [c for c, r in rows.items() if status_cell(r) == "★ best"] == ["c0009"]
    assert status_cell(rows["c0005"]) == status_cell(rows["c0001"]) == "former best"
    # c0013 is 0.5 % faster than c0009, inside max(1 %, 3 × 0.4 %) = 1.2 %
    assert status_cell(rows["c0013"]) == "within noise 1.2 %"
    assert status_cell(rows["c0007"]) == "accepted"  # slower than the best: no margin to tell


def test_every_parent_names_a_row_and_a_copy_is_explained():
    rows = {r.id: r for r in messy_feed().rows()}
    assert all(r.parent in rows for r in rows.values() if r.parent)
    assert rows["c0007"].parent == "c0001" and rows["c0007"].parent_copy == "c0003"
    from rich.console import Console

    from evotui.tui.screens.details import summary

    console = Console(width=200, record=True)
    console.print(summary(rows["c0007"], None))
    text = console.export_text()
    assert "c0001 (through its copy c0003 on island 1" in text
    console.print(summary(rows["c0013"], None))
    assert "less than the noise margin of 1.2 %" in console.export_text()


def test_the_status_says_the_state_now_never_an_old_message():
    feed = messy_feed()
    s = feed.take().status
    assert "evaluating the seed" not in s.message  # the seed was evaluated since
    feed.on_event(Status("paused (2 in flight finish first)", t=T0 + 20))
    assert "paused" not in feed.status().message  # the state badge says it, from the engine
    paused = render_status(feed.status(), "paused", in_flight=2, width=120).plain
    assert " paused  2 in flight finish first" in paused
    assert "in flight" not in render_status(feed.status(), "paused", in_flight=0,
                                            width=120).plain
    assert feed.status().message == "migration: c0009→island 1"
    feed.clock[0] = T0 + 20 + MESSAGE_TTL_S + 1  # type: ignore[attr-defined]
    assert feed.status().message == ""
    feed.on_event(Status("cannot write the run directory: disk full", "error"))
    feed.clock[0] += 10 * MESSAGE_TTL_S  # type: ignore[attr-defined]
    assert "disk full" in feed.status().message  # an error stays


def test_two_status_lines_at_80_columns_with_the_state_counts_and_failures():
    s = messy_feed(gpu=False).status()
    for state, n in (("running", 1), ("paused", 2)):
        lines = render_status(s, state, in_flight=n, width=78).plain.split("\n")
        assert len(lines) == 2 and all(cell_len(x) <= 78 for x in lines)
        assert f" {state} " in lines[0] and "5/30 evaluated" in lines[0]
        assert lines[1].startswith("best c0009") and "6 of 12 answers unusable" in lines[1]


def test_toasts_are_capped_and_not_repeated():
    now = [0.0]
    gate = ToastGate(clock=lambda: now[0])
    assert not gate.allow("resumed", "info", 8)
    assert gate.allow("advice library: retrieval failed (OSError 5)", "warning", 8)
    assert not gate.allow("advice library: retrieval failed (OSError 7)", "warning", 8)
    assert gate.allow("cannot write events.jsonl", "warning", 8)
    assert not gate.allow("something else", "error", 15)  # two on screen already
    now[0] = 9.0
    assert gate.allow("something else", "error", 15)
    now[0] = 70.0
    assert gate.allow("advice library: retrieval failed (OSError 9)", "warning", 8)


@aio
async def test_a_flood_of_failures_raises_no_toast():
    feed = messy_feed()
    app = create_app(FakeController(), feed)
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.pause(0.3)
        for n in range(40):
            feed.on_event(Status(f"c{100 + n:04d}: llm mutation of c0009 failed (no_code): "
                                 "the answer holds no code block", "warning"))
            feed.on_event(Status(f"advice library: recording the outcome failed: {n}",
                                 "warning"))
        await pilot.pause(0.5)
        toasts = [n for n in app._notifications if "failed" in str(n.message)]
        assert len(toasts) <= 1
        assert "46 of 52 answers unusable" in app.query_one(StatusLine).text


@aio
async def test_the_quit_dialog_count_moves_while_it_asks_and_ctrl_c_opens_it():
    feed = messy_feed()
    app = create_app(FakeController(), feed)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("ctrl+c")
        await pilot.pause(0.2)
        assert isinstance(app.screen, ConfirmQuitScreen)
        assert "(5 of 30 evaluated)" in app.screen.message
        for n in range(3):
            cid = f"c{200 + n:04d}"
            feed.on_event(CandidateProposed(id=cid, parent_id="c0009", island=0, generation=3,
                                            mutator="llm", model="m", description="d",
                                            diff="+x"))
            feed.on_event(CandidateEvaluated(id=cid, accepted=False, reason="mismatch",
                                             message="no"))
        await pilot.pause(0.8)
        label = app.screen.query_one("#question")
        assert "(8 of 30 evaluated)" in str(label.render())
        assert "8/30 evaluated" in app.screen_stack[0].query_one(StatusLine).text  # under it
        await pilot.press("ctrl+c")  # asked already: still one dialog
        await pilot.pause(0.1)
        assert sum(isinstance(s, ConfirmQuitScreen) for s in app.screen_stack) == 1
        await pilot.press("n")
        await pilot.pause(0.1)
        assert not isinstance(app.screen, (ConfirmQuitScreen, CandidateScreen))


@aio
async def test_hint_wording():
    from evotui.engine.events import Hint

    app = create_app(FakeController(), messy_feed())
    async with app.run_test(size=(120, 36)) as pilot:
        app._send_hint(("try BLOCK 1024", None))
        app._send_hint(("fewer warps", 1))
        app._send_hint(("two passes", 3))
        await pilot.pause(0.1)
        said = [str(n.message) for n in app._notifications]
        assert "Hint sent for every prompt until cleared: try BLOCK 1024" in said
        assert "Hint sent for the next 1 prompt: fewer warps" in said
        assert "Hint sent for the next 3 prompts: two passes" in said
        assert app.controller.sent[-1] == Hint("two passes", 3)


@aio
async def test_a_live_run_under_a_model_that_fails_half_its_answers(tmp_path, monkeypatch):
    """The engine in its host process, as ``evotui run`` has it, over a stand-in model that
    fails every second answer: the run goes on, the status line counts the failures as the
    engine does, and no toast stack covers the panels."""
    from tests.tui_engine import stand_in_process

    monkeypatch.setenv("EVOTUI_HOME", str(tmp_path / "home"))
    runner = stand_in_process(tmp_path / "run", delay=0.05, iterations=30, messy=True,
                              config={"max_consecutive_failures": 100})
    feed = EventFeed()
    runner.start(feed.on_event, timeout=60)
    app = create_app(runner, feed)
    most_toasts = 0
    try:
        async with app.run_test(size=(200, 50)) as pilot:
            while not runner.finished:
                await pilot.pause(0.1)
                most_toasts = max(most_toasts, len(app._notifications))
            await pilot.pause(0.3)
            text = app.query_one(StatusLine).text
            llm = app.query_one("#llm")
    finally:
        runner.close(30)
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    failed = report["llm"]["failures"]
    assert report["evaluated"] == 30 and failed >= 25
    assert f"{failed} of {30 + failed} answers unusable" in text
    assert "duplicate" in llm.border_subtitle and "no_code" in llm.border_subtitle
    assert most_toasts <= 2
