"""Snapshots of the TUI's main screen (and the New advice form) with fixed content: a softmax
run under a model that fails half its answers, as events, a fixed clock, no engine. Update
with ``--snapshot-update`` after checking the SVGs by eye (``scripts/tui_screenshot.py``
draws the README's picture from the same run)."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from textual.widgets import Static, TextArea

from evotui.tui.app import EvotuiApp, create_app
from evotui.tui.feed import EventFeed
from tests.tui_helpers import T0, FakeController, aio, messy_events

PANELS = {"population": "Population", "fitness": "Fitness", "diff": "Diff",
          "advice": "Advice", "llm": "LLM"}
# rows of content each panel keeps at least (80×24 is the smallest layout)
MIN_ROWS = {"population": 6, "fitness": 6, "diff": 6, "advice": 4, "llm": 4}


def make_app(gpu: bool = True) -> EvotuiApp:
    feed = EventFeed(clock=lambda: T0 + 20)
    for ev in messy_events(gpu):
        feed.on_event(ev)
    return create_app(FakeController(), feed)


def test_main_screen_80x24_cpu_interpreter(snap_compare):
    assert snap_compare(make_app(gpu=False), terminal_size=(80, 24))


def test_main_screen_200x50_gpu(snap_compare):
    assert snap_compare(make_app(gpu=True), terminal_size=(200, 50))


def test_new_advice_form_80x24(snap_compare):
    async def open_form(pilot) -> None:
        await pilot.press("n")
        pilot.app.screen.query_one(TextArea).cursor_blink = False
        await pilot.pause()

    assert snap_compare(make_app(), terminal_size=(80, 24), run_before=open_form)


@pytest.mark.parametrize("size", [(80, 24), (160, 48), (200, 50)])
@aio
async def test_no_panel_is_hidden_and_the_diff_shows_its_changed_lines(size):
    app = make_app(gpu=size[0] > 100)
    async with app.run_test(size=size) as pilot:
        await pilot.pause(0.6)  # the panels redraw at most a few times a second
        screen = app.screen.region
        status = app.query_one("#status")
        assert status.region.height == 2
        for pid, title in PANELS.items():
            panel = app.query_one(f"#{pid}")
            region = panel.region
            assert panel.border_title == title
            assert screen.contains_region(region), pid
            assert panel.content_region.height >= MIN_ROWS[pid], (pid, panel.content_region)
            assert not app.screen.get_widgets_at(region.x, region.y) or \
                next(iter(app.screen.get_widgets_at(region.x, region.y)))[0] is panel, pid
        # what the Diff panel's visible rows hold (scrolled to the top, as it opens)
        panel = app.query_one("#diff")
        body = app.query_one("#diff-body", Static)
        console = Console(width=panel.content_region.width, record=True, file=io.StringIO())
        console.print(body.content)
        visible = console.export_text().splitlines()[:panel.content_region.height]
        assert "-NUM_WARPS = 2" in visible and "+NUM_WARPS = 4" in visible, visible
