"""Snapshots of the TUI's main screen (and the New advice form) with fixed content: a short
softmax run as events, a fixed clock, no engine. Update with ``--snapshot-update`` after
checking the SVGs by eye."""

from __future__ import annotations

from textual.widgets import TextArea

from evotui.tui.app import EvotuiApp, create_app
from evotui.tui.feed import EventFeed
from tests.tui_helpers import T0, FakeController, fixed_events


def make_app(gpu: bool = True) -> EvotuiApp:
    feed = EventFeed(clock=lambda: T0 + 60)
    for ev in fixed_events(gpu):
        feed.on_event(ev)
    return create_app(FakeController(), feed)


def test_main_screen_80x24_cpu_interpreter(snap_compare):
    assert snap_compare(make_app(gpu=False), terminal_size=(80, 24))


def test_main_screen_200x60_gpu(snap_compare):
    assert snap_compare(make_app(gpu=True), terminal_size=(200, 60))


def test_new_advice_form_80x24(snap_compare):
    async def open_form(pilot) -> None:
        await pilot.press("n")
        pilot.app.screen.query_one(TextArea).cursor_blink = False
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=open_form)
