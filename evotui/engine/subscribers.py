"""Delivering events to subscribers without letting a slow one hold up the engine.

A plain callable gets its events on its own thread, in order; a coroutine function gets them
in its own task on the engine's loop. Either way the engine only appends to a queue. When a
subscriber falls more than ``backlog`` events behind, LLM chunks are dropped for it (and
counted); every other event is always delivered.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

from evotui.engine.events import Event, LLMChunk
from evotui.engine.rundir import RunDir

log = logging.getLogger(__name__)
_END = object()


class Subscriber:
    def __init__(self, fn: Callable[[Event], Any], backlog: int = 5000) -> None:
        self.fn = fn
        self.backlog = backlog
        self.dropped = 0
        self.is_async = inspect.iscoroutinefunction(fn)
        self._thread_q: queue.Queue[Any] = queue.Queue()
        self._async_q: asyncio.Queue[Any] = asyncio.Queue()
        self._thread: threading.Thread | None = None
        self._task: asyncio.Task[None] | None = None
        self._closed = False

    def start(self) -> None:
        """Start delivering (call on the engine's loop)."""
        if self.is_async:
            if self._task is None:
                self._task = asyncio.get_running_loop().create_task(self._deliver_async())
        elif self._thread is None:
            self._thread = threading.Thread(target=self._deliver_thread, daemon=True,
                                            name="evotui-subscriber")
            self._thread.start()

    def put(self, event: Event) -> None:
        if self._closed:
            return
        q = self._async_q if self.is_async else self._thread_q
        if isinstance(event, LLMChunk) and q.qsize() > self.backlog:
            self.dropped += 1
            return
        q.put_nowait(event)

    def _call(self, event: Any) -> Any:
        try:
            return self.fn(event)
        except Exception:  # a broken subscriber must not take the engine down
            log.exception("event subscriber %r failed on %s", self.fn, type(event).__name__)
            return None

    def _deliver_thread(self) -> None:
        while (event := self._thread_q.get()) is not _END:
            self._call(event)

    async def _deliver_async(self) -> None:
        while (event := await self._async_q.get()) is not _END:
            result = self._call(event)
            if inspect.isawaitable(result):
                try:
                    await result
                except Exception:
                    log.exception("event subscriber %r failed", self.fn)

    async def close(self, timeout: float = 10.0) -> None:
        """Deliver what is queued (up to ``timeout`` seconds), then stop."""
        if self._closed:
            return
        self._closed = True
        if self.is_async:
            self._async_q.put_nowait(_END)
            if self._task is not None:
                try:
                    await asyncio.wait_for(asyncio.shield(self._task), timeout)
                except TimeoutError:
                    self._task.cancel()
        else:
            self._thread_q.put(_END)
            if self._thread is not None:
                await asyncio.to_thread(self._thread.join, timeout)


class Broadcast:
    """Every event of a run, to the run directory's ``events.jsonl`` and to each subscriber.
    Subscribers added before ``start`` begin receiving there."""

    def __init__(self, run_dir: RunDir | None) -> None:
        self.run_dir = run_dir
        self._subscribers: list[Subscriber] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._log_failed = False

    def subscribe(self, fn: Callable[[Event], Any]) -> Callable[[], None]:
        sub = Subscriber(fn)
        self._subscribers.append(sub)
        if self._loop is not None:
            sub.start()

        def unsubscribe() -> None:
            if sub in self._subscribers:
                self._subscribers.remove(sub)
                if self._loop is not None:
                    self._loop.create_task(sub.close(0))

        return unsubscribe

    def start(self) -> None:
        """Start delivering (call on the engine's loop)."""
        self._loop = asyncio.get_running_loop()
        for sub in self._subscribers:
            sub.start()

    def emit(self, event: Event) -> None:
        if self.run_dir is not None:
            try:
                self.run_dir.log(event)
            except OSError as e:
                if not self._log_failed:
                    self._log_failed = True
                    log.warning("cannot write events.jsonl: %s", e)
        for sub in self._subscribers:
            sub.put(event)

    async def close(self) -> None:
        """Deliver what each subscriber has queued, then stop."""
        for sub in self._subscribers:
            await sub.close()
