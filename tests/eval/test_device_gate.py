"""Several candidates per device: each starts, compiles and loads while another is timed, then
shares the device's gate for its trials and checks (with other candidates' checks and the
judge) and has it alone for its timed calls; the host memory of handed-over outputs is
reserved at the same gate."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest

from evotui.eval import EvalRequest, EvaluatorPool
from evotui.eval.device_gate import DeviceGate
from evotui.eval.lanes import Gate as _Gate
from evotui.eval.lanes import Lane
from evotui.eval.messages import Checked, Report, TimingReport
from evotui.task.model import resolve_task
from tests.conftest import SAMPLES


class RecordingGate(DeviceGate):
    """A device gate that checks, at every change, that nobody shares the device while
    someone has it alone, and counts how it was held."""

    def __init__(self) -> None:
        super().__init__(16 << 30)
        self.alone_times = self.most_sharing = self.warm_up_count = self.reservations = 0
        self.broken: list[str] = []

    def _check(self) -> None:
        sharing, alone, _ = self.snapshot()
        self.most_sharing = max(self.most_sharing, sharing)
        if alone and sharing:
            self.broken.append(f"alone with {sharing} sharing")
        warming, past_warm_ups = self.warm_ups()
        if past_warm_ups and warming:
            self.broken.append(f"alone past warm-ups with {warming} warming up")

    def reserve(self, nbytes: int) -> int:
        self.reservations += 1
        return super().reserve(nbytes)

    def start_warm_up(self) -> None:
        super().start_warm_up()
        self.warm_up_count += 1
        self._check()

    def be_alone(self, past_warm_ups: bool = False) -> None:
        super().be_alone(past_warm_ups)
        self.alone_times += 1
        self._check()

    def share(self) -> None:
        super().share()
        self._check()

    def share_again(self) -> None:
        super().share_again()
        self._check()


@pytest.fixture(scope="module")
def shared_pool():
    pool = EvaluatorPool(device="cpu", per_device=2)
    try:
        yield pool
    finally:
        pool.close()


def test_two_candidates_of_one_device_are_timed_alone_and_checked_side_by_side(shared_pool):
    task = resolve_task(SAMPLES / "softmax")
    seed = (SAMPLES / "softmax" / "seed.py").read_text()
    assert len(shared_pool.lanes) == 2
    assert shared_pool.lanes[0].judge is shared_pool.lanes[1].judge
    gate = RecordingGate()
    for lane in shared_pool.lanes:
        lane.gate = gate
    with ThreadPoolExecutor(2) as ex:
        results = list(ex.map(shared_pool.evaluate,
                              [EvalRequest(task=task, source=seed) for _ in range(4)]))
    assert all(r.accepted for r in results), [r.message for r in results]
    for r in results:  # compiled before the gate, made its memfds ready with the host memory
        # reserved, then waited to share the device, then to be alone
        assert {"warm", "prepare", "gate_wait", "timing:alone_wait"} <= set(r.phases), r.phases
        assert r.phases["judge_read"] > 0  # its bytes read before the judge took the device
        # and where the judge's request went: inputs made again, the reference, the
        # candidate's bytes loaded and compared
        judge_parts = {k: v for k, v in r.phases.items() if k.startswith("judge:")}
        assert {"judge:inputs", "judge:reference", "judge:load", "judge:compare"} <= set(judge_parts)
        assert 0 < sum(judge_parts.values()) <= r.phases["judge"]
    assert gate.alone_times >= 4  # each candidate timed alone
    assert gate.reservations == 4  # each request's host memory, once
    assert gate.warm_up_count == 4  # each request warmed up before its first ask
    assert gate.broken == []
    assert gate.snapshot() == (0, False, gate.host_bytes)  # all given back
    assert gate.warm_ups() == (0, False)


def test_waiting_for_the_gate_does_not_count_against_the_time_limit(shared_pool):
    task = resolve_task(SAMPLES / "softmax")
    seed = (SAMPLES / "softmax" / "seed.py").read_text()
    gate = shared_pool.lanes[0].gate
    held = threading.Event()

    def hold() -> None:
        with gate.alone():
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


def test_a_report_timed_without_having_the_device_alone_is_not_believed():
    lane = Lane("cpu", "cpu", None, None, None, shares_device=True)  # type: ignore[arg-type]
    timed = Report(ok=True, timing=TimingReport(
        median_ms=1.0, spread_pct=1.0, samples=10, method="events", seed=1, calls=10,
        launches=10, launches_per_call=1, outputs=(), recheck=Checked(2, ()),
        verify=Checked(3, ()), inputs_after=()))
    gate = _Gate(lane)
    with gate:
        pass  # the candidate never asked
    assert gate.checked(Report(ok=True)).reason == "timer_tampered"
    gate = _Gate(lane)
    with gate:
        gate.on_ask("share")  # shared the device, and was timed all the same
    assert gate.checked(timed).reason == "timer_tampered"
    assert gate.checked(Report(ok=True)) == Report(ok=True)  # untimed: sharing is enough
    gate = _Gate(lane)
    with gate:
        gate.on_ask("share")
        gate.on_ask("alone")
        gate.on_ask("share")
    assert gate.checked(timed) == timed
    assert lane.gate.snapshot() == (0, False, lane.gate.host_bytes)


def test_someone_waiting_to_be_alone_goes_before_new_sharers():
    gate = DeviceGate(1 << 30)
    order: list[str] = []
    gate.share()  # a candidate's trials
    waiting = threading.Thread(target=lambda: (gate.be_alone(), order.append("alone"),
                                               gate.end_alone()))
    waiting.start()
    while gate._waiting_alone == 0:  # noqa: SLF001 - until the timing waits
        time.sleep(0.01)
    late = threading.Thread(target=lambda: (gate.share(), order.append("late sharer"),
                                            gate.unshare()))
    late.start()
    time.sleep(0.2)
    assert order == []  # neither: the first sharer still holds the device
    gate.unshare()
    waiting.join(5)
    late.join(5)
    assert order == ["alone", "late sharer"]


def test_what_is_timed_once_and_kept_waits_for_warm_ups_and_holds_new_ones_back():
    """A task's baselines divide every later speedup: a candidate compiling and making its
    first call beside them would inflate all of those, so they wait past warm-ups; a
    candidate's own timing does not (compiling takes far longer than timing)."""
    lane = Lane("cuda:0", "cuda:0", None, None, None, shares_device=True)  # type: ignore[arg-type]
    order: list[str] = []
    warming = _Gate(lane).__enter__()  # a candidate compiling, not asked yet
    timing = threading.Thread(target=lambda: (lane.gate.be_alone(), order.append("timed"),
                                              lane.gate.end_alone()))
    timing.start()  # a candidate's timing goes on beside the warm-up...
    timing.join(5)
    assert order == ["timed"]
    def baselines() -> None:  # the judge's, for a request whose candidate is done
        with lane.gate.judging(alone=True, past_warm_ups=True):
            order.append("baselines")

    primed = threading.Thread(target=baselines)
    primed.start()  # ...the baselines wait for it
    time.sleep(0.2)
    assert order == ["timed"]
    late: list[str] = []
    newcomer = threading.Thread(target=lambda: (_Gate(lane).__enter__(), late.append("warm")))
    newcomer.start()
    time.sleep(0.2)
    assert late == []  # no new warm-up while the baselines wait
    asks = threading.Thread(target=lambda: (warming.on_ask("share"), order.append("trials"),
                                            warming.__exit__()))
    asks.start()  # the warm-up ends at the candidate's first ask; its trials wait their turn
    for thread in (primed, asks, newcomer):
        thread.join(5)
    assert order == ["timed", "baselines", "trials"] and late == ["warm"]
    assert lane.gate.warm_ups() == (1, False)  # the newcomer's, still warming
    assert lane.gate.snapshot() == (0, False, lane.gate.host_bytes)


def test_a_request_queued_for_the_judge_keeps_no_timing_waiting():
    """The judge takes one request at a time; one waiting its turn does not share the device
    meanwhile, so a candidate's timing goes first once the judge's current request is done."""
    gate = DeviceGate(1 << 30)
    order: list[str] = []

    def queued() -> None:
        with gate.judging():
            order.append("judged")

    def timing() -> None:
        gate.be_alone()
        order.append("timed")
        gate.end_alone()

    with gate.judging():  # the judge's current request
        waiting = threading.Thread(target=queued)
        waiting.start()
        time.sleep(0.2)
        assert gate.snapshot()[0] == 1  # only the current request shares the device
        timed = threading.Thread(target=timing)
        timed.start()
        time.sleep(0.2)
        assert order == []
    for thread in (waiting, timed):
        thread.join(5)
    assert order == ["timed", "judged"]
    assert gate.snapshot() == (0, False, 1 << 30)


def test_the_gate_adds_up_how_the_device_was_held():
    """Where a pool's device time goes (the bench prints it): alone for timing, shared,
    draining (sharers finishing while someone waits to be alone), idle."""
    gate = DeviceGate(1 << 30)
    with gate.alone():
        time.sleep(0.3)
    gate.share()
    time.sleep(0.3)
    waiter = threading.Thread(target=lambda: (gate.be_alone(), gate.end_alone()))
    waiter.start()
    while gate._waiting_alone == 0:  # noqa: SLF001 - until the timing waits
        time.sleep(0.01)
    time.sleep(0.3)
    gate.unshare()
    waiter.join(5)
    time.sleep(0.3)
    used = gate.usage()
    assert set(used) == {"alone", "shared", "draining", "idle"}
    for use in used:
        assert 0.3 <= used[use] < 1.5, used


def test_outputs_wait_for_host_memory_that_others_hold():
    gate = DeviceGate(10 << 30)
    assert gate.reserve(8 << 30) == 8 << 30
    got: list[int] = []
    second = threading.Thread(target=lambda: got.append(gate.reserve(64 << 30)))
    second.start()  # more than there is: all of it, once the first gives its share back
    time.sleep(0.2)
    assert got == []
    gate.give_back(8 << 30)
    second.join(5)
    assert got == [10 << 30]
    assert gate.snapshot()[2] == 0


def test_a_task_whose_outputs_cannot_fit_the_host_is_refused_with_what_to_do():
    pool = EvaluatorPool(device="cpu")
    try:
        pool._sets.handover_bytes = 1 << 10  # noqa: SLF001 - a host with 1 KiB to spare
        task = resolve_task(SAMPLES / "softmax")
        seed = (SAMPLES / "softmax" / "seed.py").read_text()
        result = pool.evaluate(EvalRequest(task=task, source=seed))
    finally:
        pool.close()
    assert result.reason == "harness_error"
    assert "--shape" in result.message and "1 KiB" in result.message, result.message


def test_a_big_reservation_is_not_overtaken_by_small_ones():
    gate = DeviceGate(10 << 30)
    gate.reserve(4 << 30)
    order: list[str] = []
    big = threading.Thread(target=lambda: (gate.reserve(10 << 30), order.append("big")))
    big.start()
    time.sleep(0.1)
    small = threading.Thread(target=lambda: (gate.reserve(1 << 30), order.append("small")))
    small.start()
    time.sleep(0.2)
    assert order == []  # there is room for the small one, but the big one asked first
    gate.give_back(4 << 30)
    big.join(5)
    gate.give_back(10 << 30)
    small.join(5)
    assert order == ["big", "small"]


def test_the_host_memory_for_outputs_is_split_between_the_gates():
    from evotui.eval.memory_plan import handover_limit

    two_lanes = EvaluatorPool(device="cpu", lanes=2)  # a gate each
    shared = EvaluatorPool(device="cpu", per_device=2)  # one gate for both
    try:
        assert two_lanes.lanes[0].gate is not two_lanes.lanes[1].gate
        assert all(lane.gate.host_bytes == handover_limit(2) for lane in two_lanes.lanes)
        assert shared.lanes[0].gate is shared.lanes[1].gate
        assert shared.lanes[0].gate.host_bytes == handover_limit(1)
    finally:
        two_lanes.close()
        shared.close()


def test_reserving_host_memory_does_not_wait_for_the_device():
    """A candidate makes memfds ready for its outputs before it uses the device: it asks for
    the host memory alone, which a timing elsewhere does not hold up, and which is not yet
    an ask for the device."""
    from evotui.eval.control import gate_ask, gate_mode

    assert gate_mode(gate_ask("reserve")) == "reserve"
    assert gate_mode({"gate": "acquire", "mode": "anything"}) == "share"
    lane = Lane("cuda:0", "cuda:0", None, None, None, shares_device=True)  # type: ignore[arg-type]
    lane.gate.be_alone()  # someone else's timing
    gate = _Gate(lane, handover_bytes=1 << 20)
    with gate:
        asked = threading.Thread(target=gate.on_ask, args=("reserve",))
        asked.start()
        asked.join(2)
        assert not asked.is_alive()  # the device is still someone else's
        assert gate.reserved == 1 << 20 and not gate.asked and gate.state == ""
        lane.gate.end_alone()
        gate.on_ask("share")  # reserved already: only the device is waited for
    assert lane.gate.snapshot() == (0, False, lane.gate.host_bytes)


def _finish(*threads: threading.Thread, within_s: float = 5.0) -> list[threading.Thread]:
    """Join the (daemon) threads; those still waiting after ``within_s`` in all."""
    deadline = time.monotonic() + within_s
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    return [thread for thread in threads if thread.is_alive()]


def _waiter(target: Callable[[], object]) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)  # left behind if the gate hangs
    thread.start()
    return thread


def test_the_judge_reading_ahead_and_a_task_s_baselines_never_wait_on_each_other():
    """One request's judge reads its bytes while another's judge is to time a task's
    baselines: the one holding the judge must get the device, and the other the judge after
    it, not each wait for what the other holds (a pool of six workers per GPU hung so)."""
    gate = DeviceGate(1 << 30)
    order: list[str] = []
    baselines_asked = threading.Event()

    def read() -> None:
        order.append("read")
        baselines_asked.wait(5)
        time.sleep(0.2)  # the baselines are waiting by now

    def judge_reading() -> None:
        with gate.judging(reading=read):
            order.append("judged")

    def baselines() -> None:
        baselines_asked.set()
        with gate.judging(alone=True, past_warm_ups=True):
            order.append("baselines")

    reading = _waiter(judge_reading)
    while "read" not in order:
        time.sleep(0.01)
    primed = _waiter(baselines)
    assert _finish(reading, primed) == [], f"hung: {order}"
    assert order == ["read", "judged", "baselines"]
    assert gate.snapshot() == (0, False, 1 << 30)


def test_a_candidate_waiting_for_host_memory_keeps_no_baselines_waiting():
    """A candidate that has compiled and asks for the host memory of its outputs, which
    another request holds, is no longer warming up: the baselines do not wait for it, so the
    holder (waiting behind the baselines to share the device) gets on and gives the memory
    back (a pool of six workers per GPU hung so)."""
    lane = Lane("cuda:0", "cuda:0", None, None, None, shares_device=True)  # type: ignore[arg-type]
    lane.gate.host_bytes = lane.gate._free_bytes = 1 << 20  # noqa: SLF001 - room for one
    order: list[str] = []
    holder = _Gate(lane, handover_bytes=1 << 20).__enter__()
    holder.on_ask("reserve")  # compiled; its memfds are being made ready
    waiting = _Gate(lane, handover_bytes=1 << 20).__enter__()
    wants_memory = _waiter(lambda: (waiting.on_ask("reserve"), order.append("reserved")))
    time.sleep(0.1)

    def baselines() -> None:
        with lane.gate.judging(alone=True, past_warm_ups=True):
            order.append("baselines")

    primed = _waiter(baselines)
    time.sleep(0.2)  # the baselines wait to be alone

    def holder_goes_on() -> None:
        holder.on_ask("share")
        order.append("trials")
        holder.__exit__()  # judged, its outputs let go: the memory goes back

    goes_on = _waiter(holder_goes_on)
    assert _finish(primed, goes_on, wants_memory) == [], f"hung: {order}"
    assert order == ["baselines", "trials", "reserved"]
    waiting.__exit__()
    assert lane.gate.snapshot() == (0, False, 1 << 20)
    assert lane.gate.warm_ups() == (0, False)


@pytest.mark.parametrize("seed", range(4))
def test_six_lanes_with_scarce_memory_baselines_and_read_aheads_always_finish(seed):
    """The whole protocol, many times over, in random order: six candidates of one device
    warm up, reserve host memory for about two requests' outputs, share, are alone, share
    again, then are judged (reading ahead or not), some after timing a task's baselines or the
    device's facts. Every one finishes, and the gate's rules held throughout."""
    import random

    lane = Lane("cuda:0", "cuda:0", None, None, None, shares_device=True)  # type: ignore[arg-type]
    lane.gate = gate = RecordingGate()
    gate.host_bytes = gate._free_bytes = 5  # noqa: SLF001 - two or three requests' outputs
    done: list[int] = []

    def nap(rng: random.Random) -> None:
        time.sleep(rng.uniform(0.0, 0.004))

    def candidates(lane_index: int) -> None:
        rng = random.Random(seed * 100 + lane_index)
        for _ in range(8):
            with _Gate(lane, handover_bytes=rng.choice((1, 2, 3))) as asks:
                nap(rng)  # compiling, first call
                asks.on_ask(rng.choice(("reserve", "share")))
                for mode in ("share", "alone", "share"):
                    nap(rng)
                    asks.on_ask(mode)
                nap(rng)
                asks.release()
                if rng.random() < 0.3:  # a task's baselines (or the device's facts)
                    with gate.judging(alone=True, past_warm_ups=True):
                        nap(rng)
                with gate.judging(reading=(lambda: nap(rng)) if rng.random() < 0.7 else None):
                    nap(rng)
            done.append(lane_index)

    lanes = [_waiter(lambda i=i: candidates(i)) for i in range(6)]
    assert _finish(*lanes, within_s=30) == [], f"hung after {len(done)} of 48 candidates"
    assert len(done) == 48 and gate.broken == []
    assert gate.snapshot() == (0, False, 5) and gate.warm_ups() == (0, False)
