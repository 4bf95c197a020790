"""Draw the README's picture of the TUI: ``python3 scripts/tui_screenshot.py [OUT.svg]``.

The app is the real one, over the fixed run the snapshot tests use (a softmax run on an H200
under a model that fails half its answers; no engine, no GPU needed), saved by Textual as an
SVG. Run it again whenever the layout changes; the default output is docs/tui.svg.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evotui.tui.app import create_app  # noqa: E402
from evotui.tui.feed import EventFeed  # noqa: E402
from tests.tui_helpers import T0, FakeController, messy_events  # noqa: E402

SIZE = (160, 44)


async def shoot(out: Path) -> None:
    feed = EventFeed(clock=lambda: T0 + 20)
    for event in messy_events(gpu=True):
        feed.on_event(event)
    app = create_app(FakeController(), feed)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(1.0)  # the panels redraw a few times a second
        app.save_screenshot(filename=out.name, path=str(out.parent))


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else ROOT / "docs" / "tui.svg"
    asyncio.run(shoot(out))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
