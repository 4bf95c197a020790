"""The live TUI: watch the evolution and steer it from the keyboard.

``create_app(controller, feed)`` builds the app; ``evotui.tui.launch.run_tui`` starts a real
run behind it. The app never waits on the engine: a 10 Hz timer takes one frame from the feed
(everything that changed since the previous tick) and applies it inside ``batch_update``;
commands go to the engine through the controller; anything that blocks (advice writes,
reading a candidate's code, exporting) runs in a worker thread.
"""

from __future__ import annotations

import gc
import logging
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Grid
from textual.css.query import NoMatches
from textual.events import Resize
from textual.widgets import Footer

from evotui.engine.events import Hint, PinParent, Stop
from evotui.engine.session import STOP_GRACE_S
from evotui.tui.advice import AdvicePanel
from evotui.tui.advice_keys import AdviceKeys
from evotui.tui.commands import EvotuiCommands
from evotui.tui.controller import Controller, NothingToExport
from evotui.tui.diff import DiffPanel
from evotui.tui.feed import EventFeed
from evotui.tui.fitness import FitnessChart
from evotui.tui.llm import LLMPanel
from evotui.tui.messages import EngineFinished
from evotui.tui.population import PopulationTable
from evotui.tui.screens import CandidateScreen, ConfirmQuitScreen, HintScreen
from evotui.tui.status import StatusLine
from evotui.tui.toasts import ToastGate
from evotui.tui.views import Frame, Notice, StatusView, failures_label

log = logging.getLogger(__name__)

REFRESH_HZ = 10.0
NARROW_BELOW = 120  # columns
WARNING_TOAST_S, ERROR_TOAST_S = 8.0, 15.0
OWN_ACTIONS = {"toggle_pause", "new_advice", "accept", "veto", "hint", "export", "details",
               "pin", "sort"}


class EvotuiApp(AdviceKeys, App[int]):
    CSS_PATH = "app.tcss"
    TITLE = "evotui"
    COMMANDS = App.COMMANDS | {EvotuiCommands}
    BINDINGS = [
        Binding("space", "toggle_pause", "Pause", tooltip="Pause or resume the run"),
        Binding("n", "new_advice", "Advice", tooltip="Write new advice into the library"),
        Binding("a", "accept", "Accept", tooltip="Accept the highlighted advice"),
        Binding("v", "veto", "Veto", tooltip="Veto the highlighted advice"),
        Binding("h", "hint", "Hint", tooltip="A hint for the next mutations"),
        Binding("e", "export", "Export", tooltip="Write the best kernel to best.py"),
        Binding("q", "quit", "Quit", tooltip="Stop the run, write the report and quit"),
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True,
                tooltip="Stop the run, write the report and quit (asks first)"),
    ]

    def __init__(self, controller: Controller, feed: EventFeed, *,
                 notes: Iterable[str] = (), refresh_hz: float = REFRESH_HZ) -> None:
        super().__init__()
        self.controller = controller
        self.feed = feed
        self.refresh_hz = refresh_hz
        self.notes = list(notes)
        self.status = StatusView()
        self.quitting = False
        self.frames = 0
        self._ui_error_shown = False
        self.toasts = ToastGate()

    # ---- layout ------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield StatusLine(id="status")
        with Grid(id="panels"):
            yield PopulationTable(id="population")
            yield FitnessChart(id="fitness")
            yield DiffPanel(id="diff")
            yield AdvicePanel(id="advice")
            yield LLMPanel(id="llm")
        yield Footer()

    def on_mount(self) -> None:
        self._set_narrow(self.size.width)
        for note in self.notes:
            self.notify(note, severity="warning", timeout=12)
        self.controller.add_finished_callback(lambda: self.post_message(EngineFinished()))
        self.query_one(PopulationTable).focus()
        self.tick()
        self.set_interval(1 / self.refresh_hz, self.tick, name="refresh")
        self._freeze_heap()
        self.set_timer(3.0, self._freeze_heap)

    def _freeze_heap(self) -> None:
        """Move what is alive now (modules, widgets) out of the garbage collector's sight.
        Rendering makes reference cycles (Textual's strips and their caches) at a steady
        rate, so full collections come every second or two, and each one walks every
        tracked object: 150–250 ms for ~200,000 objects, enough to stall the event loop.
        Frozen, they walk only what was made since (run at mount and once more at 3 s,
        after the first frames' imports; a collection first, so no garbage is frozen)."""
        gc.collect()
        gc.freeze()

    def on_resize(self, event: Resize) -> None:
        self._set_narrow(event.size.width)

    def _set_narrow(self, width: int) -> None:
        narrow = width < NARROW_BELOW
        self.set_class(narrow, "narrow")
        self.query_one(DiffPanel).set_compact(narrow)

    @property
    def population(self) -> PopulationTable:
        return self.query_one(PopulationTable)

    @property
    def advice(self) -> AdvicePanel:
        return self.query_one(AdvicePanel)

    # ---- refresh -----------------------------------------------------------------------------
    def run_state(self, status: StatusView) -> str:
        """From the run's state now (the controller asks the engine), never from a message."""
        if status.outcome:
            return status.outcome
        c = self.controller
        if c.stopping or self.quitting:
            return "stopping…"
        if c.paused:
            return "paused"
        return "running" if status.started else "starting…"

    def in_flight(self, status: StatusView) -> int:
        """Iterations in flight, as the engine counts them (the feed's count otherwise)."""
        if status.outcome:
            return 0
        n = self.controller.in_flight
        return status.in_flight if n is None else int(n)

    def tick(self) -> None:
        """Take one frame from the feed and draw it (the 10 Hz timer)."""
        if len(self.screen_stack) > 1:  # a form is open: the feed keeps what changes until
            self._status_under_form()  # it closes; only the status line stays current
            return
        try:
            frame = self.feed.take()
            if frame is not None:
                self.status = frame.status
                with self.batch_update():
                    self._apply(frame)
            self.query_one(StatusLine).show(self.status, self.run_state(self.status),
                                            self.in_flight(self.status))
        except NoMatches:  # the app is closing: its main screen is gone already
            return
        except Exception as e:  # a drawing bug must not take the run down with it
            log.exception("refreshing the TUI failed")
            if not self._ui_error_shown:
                self._ui_error_shown = True
                self.notify(f"display error: {type(e).__name__}: {e} (details in the log)",
                            severity="error", timeout=15)

    def _status_under_form(self) -> None:
        try:
            status = self.feed.status()
            self.screen_stack[0].query_one(StatusLine).show(
                status, self.run_state(status), self.in_flight(status))
        except NoMatches:
            return
        except Exception:  # never let the status line break a form
            log.exception("refreshing the status line failed")

    def _apply(self, frame: Frame) -> None:
        self.frames += 1
        population = self.population
        population.apply(frame.rows)
        if frame.fitness is not None:
            self.query_one(FitnessChart).show(frame.fitness)
        if frame.advice is not None:
            self.advice.show(frame.advice)
        llm = self.query_one(LLMPanel)
        llm.feed(frame.llm)
        llm.border_subtitle = failures_label(frame.status, limit=3)
        shown = population.highlighted_id
        if shown is not None and any(r.id == shown for r in frame.rows):
            self.query_one(DiffPanel).show(self.feed.row(shown))
        for notice in frame.notices:
            self._toast(notice)
        if frame.finished:
            s = frame.status
            where = f" Report: {Path(s.run_dir) / 'report.json'}." if s.run_dir else ""
            self.notify(f"Run {s.outcome}: {s.outcome_message}.{where} q quits.",
                        severity="error" if s.outcome == "failed" else "information",
                        timeout=20)

    def _toast(self, notice: Notice) -> None:
        timeout = ERROR_TOAST_S if notice.level == "error" else WARNING_TOAST_S
        if not self.toasts.allow(notice.message, notice.level, timeout):
            return  # the status line shows it; toasts are for rare events
        lines = [x for x in notice.message.splitlines() if x.strip()]
        if len(lines) > 2:  # a traceback: its first and last lines, never the whole thing
            message = f"{lines[0]} … {lines[-1].strip()}"
        else:
            message = " ".join(lines)
        self.notify(message, severity="error" if notice.level == "error" else "warning",
                    timeout=timeout)

    def on_population_table_highlighted(self, event: PopulationTable.Highlighted) -> None:
        if event.candidate_id is not None:
            self.query_one(DiffPanel).show(self.feed.row(event.candidate_id))

    def on_population_table_open(self, event: PopulationTable.Open) -> None:
        self._open_details(event.candidate_id)

    def on_engine_finished(self, _: EngineFinished) -> None:
        self.tick()
        error = self.controller.error
        if error:
            last = [x for x in error.splitlines() if x.strip()][-1]
            self.notify(f"engine stopped with an error: {last}", severity="error", timeout=30)
        if self.quitting:
            self._leave()

    def exit_code(self) -> int:
        failed = self.status.outcome == "failed" or self.controller.error
        return 1 if failed else 0

    def _leave(self) -> None:
        code = self.exit_code()
        self.exit(code, return_code=code)

    # ---- actions -----------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in OWN_ACTIONS and len(self.screen_stack) > 1:
            return False  # a form is open: its keys are its own
        return True

    def action_toggle_pause(self) -> None:
        pausing = self.controller.toggle_pause()
        if pausing is None:
            self.notify("The run is over: nothing to pause.", severity="warning")
        elif pausing:
            self.notify("Pausing: evaluations in flight finish first.", timeout=4)
        else:
            self.notify("Resumed.", timeout=3)
        self.tick()

    def action_hint(self) -> None:
        note = ""
        if self.status.mutator == "param":
            note = "The param mutator uses no prompt: hints reach model mutations only."
        self.push_screen(HintScreen(note), self._send_hint)

    def _send_hint(self, result: tuple[str, int | None] | None) -> None:
        if result is None:
            return
        text, uses = result
        if not self.controller.send(Hint(text, uses)):
            self.notify("The run is over: the hint was not sent.", severity="warning")
        elif text:
            which = (f"the next {uses} prompt{'s' if uses != 1 else ''}" if uses
                     else "every prompt until cleared")
            self.notify(f"Hint sent for {which}: {text}", timeout=6)
        else:
            self.notify("Hints cleared.", timeout=4)

    def action_export(self) -> None:
        self._export_worker()

    @work(thread=True, exclusive=True, group="export", exit_on_error=False)
    def _export_worker(self) -> None:
        try:
            best_id, path = self.controller.export_best()
        except NothingToExport as e:
            self.call_from_thread(self.notify, f"Nothing to export: {e}.", severity="warning")
        except Exception as e:
            self.call_from_thread(self.notify, f"export failed: {e}", severity="error")
        else:
            self.call_from_thread(self.notify, f"Best kernel {best_id} written to {path}",
                                  timeout=10)

    def action_details(self) -> None:
        cid = self.population.highlighted_id
        if cid is None:
            self.notify("No candidate yet.", severity="warning")
            return
        self._open_details(cid)

    def _open_details(self, cid: str) -> None:
        self._details_worker(cid)

    @work(thread=True, exclusive=True, group="details", exit_on_error=False)
    def _details_worker(self, cid: str) -> None:
        try:
            info = self.controller.candidate(cid)
        except Exception as e:
            log.warning("reading candidate %s failed: %s", cid, e)
            info = None
        self.call_from_thread(self.push_screen, CandidateScreen(cid, self.feed.row(cid), info))

    def on_candidate_screen_pin(self, event: CandidateScreen.Pin) -> None:
        self._pin(event.candidate_id)

    def action_pin(self) -> None:
        cid = self.population.highlighted_id
        if cid is not None:
            self._pin(cid)

    def _pin(self, cid: str) -> None:
        if self.controller.send(PinParent(cid)):
            self.notify(f"{cid} will be the parent of the next mutation.", timeout=4)

    def action_sort(self, column: str) -> None:
        self.population.sort_by(column)

    async def action_quit(self) -> None:
        c = self.controller
        if self.quitting:  # a second q while stopping: abandon what is in flight
            c.send(Stop(0))
            self.notify("Stopping now.", timeout=3)
            return
        if not c.running:
            self._leave()
            return
        if isinstance(self.screen, ConfirmQuitScreen):
            return  # already asking
        self.push_screen(ConfirmQuitScreen(self._quit_question), self._confirmed_quit)

    def _quit_question(self) -> str:
        """The quit dialog's question, with the count as it is now (it is asked again while
        the dialog is open)."""
        s = self.feed.status()
        return (f"A run is in progress ({s.evaluated} of {s.iterations} evaluated). Stop it, "
                "write the report and quit?")

    def _confirmed_quit(self, yes: bool | None) -> None:
        if not yes:
            return
        self.quitting = True
        if not self.controller.send(Stop(STOP_GRACE_S)):  # it ended meanwhile
            self._leave()
            return
        self.notify(f"Stopping: evaluations in flight get {STOP_GRACE_S:g} s, then the report "
                    "is written (q again: stop now).", timeout=10)
        self.tick()


def create_app(controller: Controller, feed: EventFeed | None = None, *,
               notes: Iterable[str] = (), refresh_hz: float = REFRESH_HZ,
               clock: Callable[[], float] = time.time) -> EvotuiApp:
    """The app for a run behind ``controller`` whose events reach ``feed`` (a new feed is
    made when none is given: subscribe ``app.feed`` to the engine then)."""
    return EvotuiApp(controller, feed or EventFeed(clock), notes=notes, refresh_hz=refresh_hz)
