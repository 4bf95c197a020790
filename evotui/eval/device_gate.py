"""Who may use one device, and how: many at once for work that is not timed (a candidate's
trials and checks, the judge's references), one alone for anything timed (a candidate's
timed calls, the judge's baselines, the device's facts).

``DeviceGate`` is a readers-writer lock that prefers the writer: once someone waits to be
alone, nobody new starts sharing, so timing never starves behind a stream of checks.

A candidate's process compiles and makes its first call before it first asks (its warm-up,
ended by any ask): that overlaps another candidate's timing on purpose, since compiling takes
far longer than timing. What is timed once and kept (the judge's baselines of a task, the
device's facts) instead waits for every warm-up under way and lets none start until it is done
(``alone(past_warm_ups=True)``). It also keeps the host memory that handed-over outputs may
take (half the host's, split between the devices): each candidate reserves what its request may
hand over before it shares the device, and gives it back when its worker has let the outputs go.

The device's judge (one process, one request at a time) is taken at the same gate, first the
judge, then the device shared or alone (``judging``): nobody holds the device while queued for
the judge, where a request waiting its turn would keep a timing waiting for nothing. A request
whose judge first reads bytes (no device work) does that between the two.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

# how the device was held, for the seconds ``usage`` adds up: someone alone; sharers, with
# someone waiting to be alone meanwhile (the sharers drain: nobody new may join them); sharers
# alone; nobody
USES = ("alone", "draining", "shared", "idle")


class DeviceGate:
    def __init__(self, host_bytes: int) -> None:
        self.host_bytes = max(1, host_bytes)
        self._cond = threading.Condition()
        self._sharing = 0
        self._alone = False
        self._waiting_alone = 0
        self._warming = 0  # requests whose candidate has not asked yet
        self._warm_ups_held = 0  # alone, or waiting to be, past warm-ups: none may start
        self._alone_past_warm_ups = False  # whoever is alone waited past warm-ups
        self._judging = False  # the judge has a request
        self._free_bytes = self.host_bytes
        self._next_ticket = self._serving = 0  # reservations, in the order they were asked
        self._seconds = dict.fromkeys(USES, 0.0)
        self._last = time.monotonic()

    # -- host memory for handed-over outputs ---------------------------------------------------
    def reserve(self, nbytes: int) -> int:
        """Wait until ``nbytes`` (at most all of it) of the host's share are free; take them.
        First come, first served: a big reservation (an A/B takes all) is not overtaken
        forever by small ones."""
        nbytes = min(max(0, nbytes), self.host_bytes)
        with self._cond:
            ticket = self._next_ticket
            self._next_ticket += 1
            self._cond.wait_for(lambda: self._serving == ticket and self._free_bytes >= nbytes)
            self._serving += 1
            self._free_bytes -= nbytes
            self._cond.notify_all()
        return nbytes

    def give_back(self, nbytes: int) -> None:
        with self._cond:
            self._free_bytes = min(self.host_bytes, self._free_bytes + nbytes)
            self._cond.notify_all()

    # -- the device --------------------------------------------------------------------------
    def start_warm_up(self) -> None:
        """A candidate's request is sent: it may use the device before its first ask."""
        with self._cond:
            self._cond.wait_for(lambda: not self._warm_ups_held)
            self._warming += 1

    def end_warm_up(self) -> None:
        with self._cond:
            self._warming -= 1
            self._cond.notify_all()

    def share(self) -> None:
        with self._cond:
            self._cond.wait_for(lambda: not self._alone and not self._waiting_alone)
            self._account()
            self._sharing += 1

    def unshare(self) -> None:
        with self._cond:
            self._account()
            self._sharing -= 1
            self._cond.notify_all()

    def be_alone(self, past_warm_ups: bool = False) -> None:
        """Wait until nobody else uses the device (the caller must not be sharing it); with
        ``past_warm_ups``, nor warms up on it, and no warm-up starts until ``end_alone``."""
        with self._cond:
            self._account()
            self._waiting_alone += 1
            self._warm_ups_held += int(past_warm_ups)
            try:
                self._cond.wait_for(lambda: not self._alone and self._sharing == 0
                                    and not (past_warm_ups and self._warming))
            except BaseException:
                self._warm_ups_held -= int(past_warm_ups)
                self._cond.notify_all()
                raise
            finally:
                self._account()
                self._waiting_alone -= 1
            self._alone = True
            self._alone_past_warm_ups = past_warm_ups

    def share_again(self) -> None:
        """From alone to sharing, with nobody getting in between."""
        with self._cond:
            self._end_alone()
            self._sharing += 1
            self._cond.notify_all()

    def end_alone(self) -> None:
        with self._cond:
            self._end_alone()
            self._cond.notify_all()

    def _end_alone(self) -> None:
        self._account()
        self._alone = False
        self._warm_ups_held -= int(self._alone_past_warm_ups)
        self._alone_past_warm_ups = False

    @contextmanager
    def alone(self, past_warm_ups: bool = False) -> Iterator[None]:
        self.be_alone(past_warm_ups)
        try:
            yield
        finally:
            self.end_alone()

    @contextmanager
    def judging(self, alone: bool = False, past_warm_ups: bool = False,
                reading: Callable[[], None] | None = None) -> Iterator[None]:
        """The judge for one request, with the device shared (or ``alone``, for what it times
        once and keeps: then ``past_warm_ups`` too). ``reading``: the judge's work that needs
        no device (reading the bytes handed over), done with the judge taken and the device
        not yet, which others may time on meanwhile.

        The judge is always taken before the device: whoever waits for the judge holds no
        part of the device, so no two waits can close a cycle (a request holding the judge
        while it waits to share, and another waiting to be alone until it has the judge)."""
        self._take_judge()
        try:
            if reading is not None:
                reading()
            if alone:
                self.be_alone(past_warm_ups)
            else:
                self.share()
            try:
                yield
            finally:
                if alone:
                    self.end_alone()
                else:
                    self.unshare()
        finally:
            self._give_judge()

    def _take_judge(self) -> None:
        with self._cond:
            self._cond.wait_for(lambda: not self._judging)
            self._judging = True

    def _give_judge(self) -> None:
        with self._cond:
            self._judging = False
            self._cond.notify_all()

    def snapshot(self) -> tuple[int, bool, int]:
        """(sharers, whether someone is alone, free host bytes): for tests and diagnostics."""
        with self._cond:
            return self._sharing, self._alone, self._free_bytes

    def usage(self) -> dict[str, float]:
        """Seconds the device spent in each of ``USES`` since the gate was made."""
        with self._cond:
            self._account()
            return dict(self._seconds)

    def _account(self) -> None:
        """Add the time since the last change to how the device was held until now (called,
        under the lock, before each change)."""
        now = time.monotonic()
        if self._alone:
            use = "alone"
        elif self._sharing:
            use = "draining" if self._waiting_alone else "shared"
        else:
            use = "idle"
        self._seconds[use] += now - self._last
        self._last = now

    def warm_ups(self) -> tuple[int, bool]:
        """(warm-ups under way, whether whoever is alone waited past them): for tests."""
        with self._cond:
            return self._warming, self._alone and self._alone_past_warm_ups
