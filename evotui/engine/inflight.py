"""The engine's tasks in flight: iteration slots, their phases, the pause gate and stopping.

Several iterations run at once, one per slot, so model generation overlaps evaluation. A slot
reserves an iteration before starting it, so no more than the children still to evaluate are
ever in flight; one that fails frees its place for another slot. Each tracked task carries a
phase ("idle" | "mutate" | "evaluate" | "distill"): a stop with a grace period spares the
evaluations and cancels the rest.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class InFlight:
    def __init__(self) -> None:
        self._phase: dict[asyncio.Task[Any], str] = {}
        self._reserved = 0  # iterations started and not yet recorded or failed
        self._stopping = False
        self._running = asyncio.Event()  # cleared while paused
        self._running.set()
        self._change = asyncio.Event()  # replaced by a fresh one at each notify

    @property
    def reserved(self) -> int:
        return self._reserved

    @property
    def stopping(self) -> bool:
        return self._stopping

    @property
    def paused(self) -> bool:
        return not self._running.is_set()

    def pause(self) -> None:
        """Start no more iterations; those in flight finish."""
        self._running.clear()

    def resume(self) -> None:
        self._running.set()

    def stop_starting(self) -> None:
        """Start no more iterations, paused or not."""
        self._stopping = True
        self._running.set()
        self._notify()

    def _notify(self) -> None:
        self._change.set()
        self._change = asyncio.Event()

    def set_phase(self, phase: str) -> None:
        """Mark the calling slot's current phase."""
        task = asyncio.current_task()
        assert task is not None
        self._phase[task] = phase

    async def tracked(self, coro: Coroutine[Any, Any, T], phase: str) -> T | None:
        """Run ``coro`` as a task that a stop can cancel; None when it was cancelled so."""
        task = asyncio.create_task(coro)
        self._phase[task] = phase
        try:
            return await task
        except asyncio.CancelledError:
            if not task.cancelled():  # the caller itself was cancelled
                raise
            return None
        finally:
            self._phase.pop(task, None)

    async def run_slots(self, n: int, iteration: Callable[[], Awaitable[None]],
                        remaining: Callable[[], int]) -> None:
        """Run ``iteration`` in ``n`` slots until ``remaining()`` (children still to evaluate)
        reaches 0 or a stop; an exception in an iteration ends the run with it."""
        tasks = [asyncio.create_task(self._slot(iteration, remaining)) for _ in range(n)]
        for task in tasks:
            self._phase[task] = "idle"
        results = await asyncio.gather(*tasks, return_exceptions=True)
        for task in tasks:
            self._phase.pop(task, None)
        for r in results:
            if isinstance(r, Exception):
                raise r

    async def _slot(self, iteration: Callable[[], Awaitable[None]],
                    remaining: Callable[[], int]) -> None:
        me = asyncio.current_task()
        assert me is not None
        while True:
            if not self._running.is_set():
                await self._running.wait()
            left = remaining()
            if self._stopping or left <= 0:
                return
            if self._reserved >= left:
                await self._change.wait()  # a reserved iteration may yet fail and free its place
                continue
            self._reserved += 1
            try:
                await iteration()
            finally:
                self._reserved -= 1
                self._phase[me] = "idle"
                self._notify()

    def cancel(self, *, spare_evaluations: bool = False) -> None:
        """Cancel the tracked tasks (with ``spare_evaluations``, all but those evaluating)."""
        for task, phase in list(self._phase.items()):
            if not spare_evaluations or phase != "evaluate":
                task.cancel()

    async def cancel_all(self) -> None:
        """Cancel every tracked task and wait until they have ended."""
        tasks = [t for t in self._phase if not t.done()]
        for t in tasks:
            t.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
