"""Several candidates per device: each starts, compiles and loads while another is timed, then
waits for the device's gate before its trials and timing; the judge works under the same gate."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from evotui.eval import EvalRequest, EvaluatorPool
from evotui.eval.lanes import Gate as _Gate
from evotui.eval.lanes import Lane
from evotui.eval.messages import Report
from evotui.task.model import resolve_task
from tests.conftest import SAMPLES


class RecordingLock:
    """A lock that counts its holders: more than one at a time would be a broken gate."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._count = threading.Lock()
        self.holders = self.most = self.acquisitions = 0

    def acquire(self, *args, **kwargs) -> bool:
        got = self._lock.acquire(*args, **kwargs)
        if got:
            with self._count:
                self.holders += 1
                self.acquisitions += 1
                self.most = max(self.most, self.holders)
        return got

    def release(self) -> None:
        with self._count:
            self.holders -= 1
        self._lock.release()

    __enter__ = acquire

    def __exit__(self, *exc: object) -> None:
        self.release()


@pytest.fixture(scope="module")
def shared_pool():
    pool = EvaluatorPool(device="cpu", per_device=2)
    try:
        yield pool
    finally:
        pool.close()


def test_two_candidates_of_one_device_take_turns_at_its_gate(shared_pool):
    task = resolve_task(SAMPLES / "softmax")
    seed = (SAMPLES / "softmax" / "seed.py").read_text()
    assert len(shared_pool.lanes) == 2
    assert shared_pool.lanes[0].judge is shared_pool.lanes[1].judge
    gate = RecordingLock()
    for lane in shared_pool.lanes:
        lane.gate = gate
    with ThreadPoolExecutor(2) as ex:
        results = list(ex.map(shared_pool.evaluate,
                              [EvalRequest(task=task, source=seed) for _ in range(2)]))
    assert all(r.accepted for r in results), [r.message for r in results]
    for r in results:  # compiled before the gate, then waited for it
        assert "warm" in r.phases and "gate_wait" in r.phases, r.phases
    # each candidate holds it once, from its trials through its judgement
    assert gate.acquisitions >= 2
    assert gate.most == 1


def test_waiting_for_the_gate_does_not_count_against_the_time_limit(shared_pool):
    task = resolve_task(SAMPLES / "softmax")
    seed = (SAMPLES / "softmax" / "seed.py").read_text()
    gate = shared_pool.lanes[0].gate
    held = threading.Event()

    def hold() -> None:
        with gate:
            held.set()
            time.sleep(12.0)

    holder = threading.Thread(target=hold)
    holder.start()
    held.wait()
    try:
        result = shared_pool.evaluate(EvalRequest(task=task, source=seed, timeout_s=8.0))
    finally:
        holder.join()
    assert result.accepted, result.message
    assert result.phases["gate_wait"] > 8.0


def test_a_report_timed_without_the_gate_is_not_believed():
    lane = Lane("cpu", "cpu", None, None, None, shares_device=True)  # type: ignore[arg-type]
    gate = _Gate(lane)
    with gate:
        pass  # the candidate never asked
    assert gate.checked(Report(ok=True)).reason == "timer_tampered"
    gate = _Gate(lane)
    with gate:
        gate.acquire()
    assert gate.checked(Report(ok=True)) == Report(ok=True)
