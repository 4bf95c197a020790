"""A lane of the evaluator pool: a device, its candidate worker and its judge, the gate
through which its candidates share the device or have it alone, and which devices there are."""

from __future__ import annotations

import os
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from evotui.core import reasons
from evotui.eval.control import ALONE, RESERVE, SHARE, Op
from evotui.eval.device_gate import DeviceGate
from evotui.eval.messages import ABReport, Report
from evotui.eval.workers import WorkerDied, WorkerProcess, WorkerTimeout
from evotui.task.model import TaskRef

RELEASE_TIMEOUT_S = 30.0
R = TypeVar("R", Report, ABReport)


@dataclass
class Lane:
    device: str  # as the workers see it ("cuda:0" or "cpu")
    label: str  # as the user sees it ("cuda:1")
    candidate: WorkerProcess
    judge: WorkerProcess  # shared by the lanes of one device
    scratch: Path
    # the device's (shared by the lanes of one device): a candidate shares it from its trials
    # until the judge has read what it handed over and its worker has let that go, and has
    # it alone while it is timed
    gate: DeviceGate = field(default_factory=lambda: DeviceGate(16 << 30))
    shares_device: bool = False  # other lanes use this device too: candidates ask for the gate
    # (the judge, shared by the lanes of one device, takes one request at a time: at the gate,
    # ``DeviceGate.judging``)


def per_device_from_env() -> int:
    try:
        return int(os.environ.get("EVOTUI_CANDIDATES_PER_DEVICE", "1"))
    except ValueError:
        return 1


def sandbox_disabled_by_env() -> bool:
    return os.environ.get("EVOTUI_NO_SANDBOX", "") not in ("", "0")


def empty_folder(folder: Path) -> None:
    """Remove what the last candidate left in its scratch folder (files and folders)."""
    for entry in folder.iterdir():
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry, ignore_errors=True)
        else:
            entry.unlink(missing_ok=True)


def protected_paths(task: TaskRef) -> list[str]:
    """Never readable from the sandbox, nor any folder that holds them."""
    from evotui.config import home

    paths = [str(task.path), str(Path.home())]
    try:
        paths.append(str(home()))
    except OSError:
        pass
    return paths


def physical_gpu(ordinal: str) -> str:
    """The GPU id a child process must be given in CUDA_VISIBLE_DEVICES for ordinal ``ordinal``
    of this process: this process's own CUDA_VISIBLE_DEVICES (e.g. a Dask worker started with
    ``CUDA_VISIBLE_DEVICES=3``) maps ordinal 0 to GPU 3."""
    visible = [v.strip() for v in os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",") if v.strip()]
    i = int(ordinal)
    return visible[i] if i < len(visible) else ordinal


def detect_devices(device: str = "auto") -> list[str]:
    """Devices to run on: every visible GPU for ``cuda``/``auto``, else the CPU."""
    if device == "cpu":
        return ["cpu"]
    import torch

    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if device.startswith("cuda:"):
        return [device]
    if device == "cuda" and count == 0:
        raise RuntimeError("--device cuda: no CUDA GPU is visible (try --device cpu)")
    if count == 0:
        return ["cpu"]
    return [f"cuda:{i}" for i in range(count)]


def start_workers(lane: Lane) -> None:
    if not lane.candidate.alive:
        lane.candidate.start()
    if not lane.judge.alive:
        with lane.gate.judging():  # the judge may be another lane's too
            if not lane.judge.alive:
                lane.judge.start()


class Gate:
    """The device's gate for one candidate request, held the way the candidate last asked:
    shared (its trials and checks) or alone (its timed calls), until its report is in
    (``release``); the host memory reserved for the request's outputs is given back once the
    worker has let those go (its judge takes the device at ``DeviceGate.judging``). A report
    with times that were not taken alone ran beside other work on the device, so its times
    mean nothing."""

    def __init__(self, lane: Lane, handover_bytes: int = 0) -> None:
        self.lane, self.handover_bytes = lane, handover_bytes
        self.state = ""  # "", SHARE or ALONE
        self.asked = self.was_alone = False
        self.reserved: int | None = None
        self.warming = False  # its candidate may be compiling and making its first call

    def _end_warm_up(self) -> None:
        if self.warming:
            self.warming = False
            self.lane.gate.end_warm_up()

    def on_ask(self, mode: str) -> None:
        """The candidate's process asks (``evotui.eval.outbox.ask_gate``). Its warm-up ends at
        its first ask, whatever it asks: one waiting for host memory is no warm-up that the
        baselines should wait for (their wait would close a cycle with the memory's holders,
        who wait behind them to share)."""
        self._end_warm_up()
        if mode == RESERVE:  # host memory only, its device use unchanged
            self._reserve()
            return
        self.asked = True
        if mode == ALONE:
            self.alone()
            self.was_alone = True
        else:
            self.share()

    def _reserve(self) -> None:
        if self.reserved is None:
            self.reserved = self.lane.gate.reserve(self.handover_bytes)

    def share(self) -> None:  # (its warm-up ended at the ask)
        if self.state == SHARE:
            return
        if self.state == ALONE:
            self.lane.gate.share_again()
        else:
            self._reserve()
            self.lane.gate.share()
        self.state = SHARE

    def alone(self) -> None:  # (its warm-up ended at the ask)
        if self.state == ALONE:
            return
        if self.state == SHARE:
            self.lane.gate.unshare()
            self.state = ""
        self._reserve()
        self.lane.gate.be_alone()
        self.state = ALONE

    def release(self) -> None:
        """The candidate is done with the device (its process has ended): the reserved host
        memory stays with the request."""
        self._end_warm_up()
        if self.state == SHARE:
            self.lane.gate.unshare()
        elif self.state == ALONE:
            self.lane.gate.end_alone()
        self.state = ""

    def __enter__(self) -> Gate:
        if self.lane.shares_device:
            self.lane.gate.start_warm_up()
            self.warming = True
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
        if self.reserved is not None:
            self.lane.gate.give_back(self.reserved)
            self.reserved = None

    def checked(self, report: R) -> R:
        if not (self.lane.shares_device and report.ok):
            return report
        if not self.asked:
            return type(report).failed(reasons.TIMER_TAMPERED, "timed without holding the "
                                       "device (its gate was never asked for)")
        timed = report.timings if isinstance(report, ABReport) else report.timing
        if timed and not self.was_alone:
            return type(report).failed(reasons.TIMER_TAMPERED, "timed while sharing the device "
                                       "(it never asked to have it alone)")
        return report


def let_go(worker: WorkerProcess) -> None:
    """The candidate worker closes what its last candidate handed over (the judge has read
    it), so none of it sits in host memory while the device's next candidate is timed."""
    if not worker.alive:
        return
    try:
        worker.request(Op("release"), RELEASE_TIMEOUT_S)
    except (WorkerDied, WorkerTimeout):
        worker.kill()


class LaneClaim:
    """One evaluation's claim on a lane, which a cancel from the event loop can abort."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lane: Lane | None = None
        self._aborted = False

    def claim(self, lane: Lane) -> bool:
        with self._lock:
            self._lane = lane
            return not self._aborted

    def release(self) -> None:
        with self._lock:
            self._lane = None

    def abort(self) -> None:
        with self._lock:
            self._aborted = True
            if self._lane is not None:
                self._lane.candidate.abort()  # its request sees the worker die, and returns
