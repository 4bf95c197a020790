"""The engine on a thread of the UI's process (``EVOTUI_ENGINE=thread``; the default is a
child process, see ``evotui.tui.process``).

On its own thread and loop the engine never waits for the UI, and the UI never waits for
it; but they share the GIL and the garbage collector. With thousands of candidates the
engine's checkpoints (every candidate through ``asdict`` and ``json.dumps``: ~280 ms at
5,000) hold the GIL long enough to stall the UI's frames, which is why the default is a
process. The two meet only through thread-safe doors:

- events: the engine calls the feed on a subscriber thread (``EventFeed.on_event``);
- commands: ``Engine.send`` (thread-safe) for pause/resume/stop/hint/pin;
- reads of engine state (a candidate's code, the best program): run on the engine's loop
  with ``run_coroutine_threadsafe`` and awaited from a UI worker, never touched across
  threads;
- advice decisions: the advice library's hook (``evotui.memory.hook.MemoryHook``), the very
  object the engine retrieves with, called from a UI worker thread: the write is on disk
  when the call returns and the next retrieval sees it.

``on_finished`` callbacks run on the engine thread when the run is over (the app turns that
into a message with ``post_message``, which is thread-safe).

No Textual here.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
import traceback
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from evotui.engine.events import Command, Event, Pause, Resume, Stop
from evotui.engine.loop import Engine, RunResult
from evotui.engine.session import Session, SetupError
from evotui.tui.controller import (
    CandidateInfo,
    NothingToExport,
    advice_defaults,
    advice_hook,
    best_program,
    candidate_info,
    library_hook,
)

log = logging.getLogger(__name__)
T = TypeVar("T")
CALL_TIMEOUT_S = 30.0


class EngineRunner:
    """Runs ``setup()`` (which opens a session) and then its engine on a thread of its own."""

    def __init__(self, setup: Callable[[], Awaitable[Session]],
                 memory_fallback: Callable[[], Any] | None = None) -> None:
        self._setup = setup
        self._memory_fallback = memory_fallback
        self.session: Session | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.result: RunResult | None = None
        self.setup_error: BaseException | None = None
        self.error: str | None = None  # a failure outside Engine.run (which reports its own)
        self._subscribers: list[Callable[[Event], Any]] = []
        self._finished_callbacks: list[Callable[[], None]] = []
        self._ready = threading.Event()
        self._done = threading.Event()
        self._stop_requested = False
        self._thread: threading.Thread | None = None
        self._fallback_memory: Any = None
        self._memory_lock = threading.Lock()

    # ---- lifecycle ---------------------------------------------------------------------------
    def start(self, *subscribers: Callable[[Event], Any], timeout: float | None = None) -> None:
        """Open the session and start the run; raises what the setup raised (``SetupError``:
        a one-line problem for the user)."""
        self._subscribers.extend(subscribers)
        self._thread = threading.Thread(target=self._main, name="evotui-engine", daemon=True)
        self._thread.start()
        self._ready.wait(timeout)
        if self.setup_error is not None:
            raise self.setup_error

    def _main(self) -> None:
        try:
            asyncio.run(self._amain())
        except BaseException:  # noqa: BLE001 - reported to the UI, never over the screen
            self.error = traceback.format_exc(limit=8)
            log.error("engine thread failed:\n%s", self.error)
        finally:
            self._ready.set()
            self._done.set()
            for fn in list(self._finished_callbacks):
                try:
                    fn()
                except Exception:
                    log.exception("finished callback failed")

    async def _amain(self) -> None:
        self.loop = asyncio.get_running_loop()
        try:
            self.session = await self._setup()
        except BaseException as e:  # noqa: BLE001
            self.setup_error = e if isinstance(e, SetupError | Exception) else SetupError(str(e))
            self._ready.set()
            return
        engine = self.session.engine
        for fn in self._subscribers:
            engine.subscribe(fn)
        self._ready.set()
        try:
            self.result = await engine.run()
        except BaseException:  # noqa: BLE001
            self.error = traceback.format_exc(limit=8)
            log.error("engine failed:\n%s", self.error)
        finally:
            try:
                await self.session.aclose()
            except Exception:
                log.exception("closing the session failed")

    def add_finished_callback(self, fn: Callable[[], None]) -> None:
        self._finished_callbacks.append(fn)
        if self._done.is_set():
            fn()

    def join(self, timeout: float | None = None) -> bool:
        return self._done.wait(timeout)

    # ---- state -------------------------------------------------------------------------------
    @property
    def engine(self) -> Engine | None:
        return self.session.engine if self.session is not None else None

    @property
    def running(self) -> bool:
        return self._ready.is_set() and not self._done.is_set() and self.session is not None

    @property
    def finished(self) -> bool:
        return self._done.is_set()

    @property
    def paused(self) -> bool:
        engine = self.engine
        return bool(engine is not None and self.running and engine.paused)

    @property
    def stopping(self) -> bool:
        return self._stop_requested and not self._done.is_set()

    @property
    def in_flight(self) -> int:
        engine = self.engine
        return int(engine.in_flight) if engine is not None and self.running else 0

    @property
    def run_dir(self) -> Path | None:
        return self.session.run_dir.path if self.session is not None else None

    # ---- commands ----------------------------------------------------------------------------
    def send(self, command: Command) -> bool:
        """Queue a command for the engine; False when the run is over."""
        engine = self.engine
        if engine is None or not self.running:
            return False
        if isinstance(command, Stop):
            self._stop_requested = True
        engine.send(command)
        return True

    def toggle_pause(self) -> bool | None:
        """Pause or resume; returns whether it is now pausing (None: the run is over)."""
        if not self.running:
            return None
        pausing = not self.paused
        self.send(Pause() if pausing else Resume())
        return pausing

    def stop(self, grace_s: float = 5.0) -> bool:
        return self.send(Stop(grace_s))

    # ---- reads of engine state (blocking: call from a worker thread) -------------------------
    def call(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` on the engine's loop (or here once the run is over) and return its
        result."""
        loop = self.loop
        if loop is not None and not self._done.is_set() and loop.is_running():

            async def wrapped() -> T:
                return fn()

            try:
                fut = asyncio.run_coroutine_threadsafe(wrapped(), loop)
            except RuntimeError:  # the loop closed meanwhile
                pass
            else:
                try:
                    return fut.result(CALL_TIMEOUT_S)
                except concurrent.futures.CancelledError:
                    pass  # the loop shut down before running it: the engine is done
        self._done.wait(CALL_TIMEOUT_S)
        return fn()

    def candidate(self, cid: str) -> CandidateInfo | None:
        engine = self.engine
        return None if engine is None else self.call(lambda: candidate_info(engine, cid))

    def export_best(self) -> tuple[str, Path]:
        """Write the best program so far to ``best.py`` in the run directory: (id, path)."""
        engine = self.engine
        if engine is None or self.session is None:
            raise NothingToExport("the run has not started")
        best_id, text = self.call(lambda: best_program(engine))
        self.session.run_dir.write_best(text)
        return best_id, self.session.run_dir.path / "best.py"

    # ---- advice (blocking: call from a worker thread) ----------------------------------------
    def advice_defaults(self) -> dict[str, str]:
        return advice_defaults(self.engine) if self.engine is not None else {}

    def _memory(self, method: str) -> Any:
        hook = advice_hook(self.engine, method)
        if hook is not None:
            return hook
        with self._memory_lock:
            if self._fallback_memory is None:
                self._fallback_memory = (self._memory_fallback or library_hook)()
            return self._fallback_memory

    def accept_advice(self, advice_id: str) -> Any:
        return self._memory("accept").accept(advice_id)

    def veto_advice(self, advice_id: str) -> Any:
        return self._memory("veto").veto(advice_id)

    def author_advice(self, text: str, **fields: Any) -> Any:
        return self._memory("author").author(text, **fields)
