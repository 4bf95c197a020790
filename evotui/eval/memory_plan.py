"""How many timed input sets and trials an evaluation gets, and how much host memory its
handed-over outputs may take. Decided by the pool (the trusted parent), once per task, shape
and device, from the task's footprint on the meta device and the device's memory, and sent in
the request: the worker runs exactly those and the judge checks exactly those, so neither
works it out again.

Every output a candidate hands over is a sealed memfd, in the host's memory until the judge
has read it and the worker has let it go. On a GPU those are the trials' outputs and six
calls' more (the ghost, the last timed call, the audited one, the graph replay, the recheck
and the verify calls); the timed sets hand over only fingerprints. On the CPU every timed
call's outputs and the inputs after each call are handed over too. The host's share
(``handover_limit``) is reserved per request at the device's gate (``DeviceGate.reserve``),
so candidates with small outputs overlap and those with big ones take turns; a task too big
for it runs fewer trials (never fewer than one per shape)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from evotui.eval.timing import timing_set_count
from evotui.task.model import TaskError, TaskRef, task_module
from evotui.task.shapes import footprint

# calls whose outputs are handed over besides the trials': on a GPU the ghost, last timed,
# audited, graph replay, recheck and verify calls; on the CPU the interpreter's two timed
# calls and one set's inputs too
CALLS_BESIDES_TRIALS = {"cuda": 6, "cpu": 9}
SLACK = 1.25  # over the planned bytes (guard bands, rounding); plus a fixed margin
MARGIN_BYTES = 64 << 20


def set_bytes(task: TaskRef, shape: dict[str, Any]) -> int:
    """One timed set's bytes on the device: its inputs and the outputs a call writes (twice
    the inputs where the forward cannot run on the meta device)."""
    inputs, outputs, _ = _footprint(task, shape)
    return inputs + outputs


def _footprint(task: TaskRef, shape: dict[str, Any]) -> tuple[int, int, bool]:
    """(input bytes, output bytes, whether the outputs are exact) of one call."""
    try:
        module = task_module(task.path, task.sha256)
        fp = footprint(module, shape)
    except TaskError:  # the evaluation says what is wrong with the task
        return 0, 0, False
    return fp.input_bytes, (fp.output_bytes if fp.exact else fp.input_bytes), fp.exact


def host_memory_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return None


def handover_limit(gates: int, host_bytes: int | None = None) -> int:
    """The host memory one device's candidates may fill with handed-over outputs, all of
    them together: half the host's memory, split between the ``gates`` (one per device)."""
    host = host_bytes if host_bytes is not None else host_memory_bytes()
    return (host or 16 << 30) // 2 // max(1, gates)


@dataclass(frozen=True)
class HandoverPlan:
    trials: int  # how many trials the request runs
    limit_bytes: int  # what its candidate may hand over in all (reserved at the gate)
    fits: bool = True  # False: even the fewest trials hand over more than the host's share


def plan_handover(call_bytes: int | None, trials: int, min_trials: int, host_bytes: int,
                  device_kind: str = "cuda") -> HandoverPlan:
    """Of ``trials`` asked, as many as fit (at least ``min_trials``); ``call_bytes``: what
    one call hands over at the timed (largest) shape, None when not known exactly (then the
    request may fill the whole share, and takes its turn alone)."""
    if not call_bytes:
        return HandoverPlan(trials, host_bytes)
    besides = CALLS_BESIDES_TRIALS.get(device_kind, CALLS_BESIDES_TRIALS["cpu"])
    fit = host_bytes // call_bytes - besides
    chosen = max(min_trials, min(trials, fit))
    wanted = int(call_bytes * (chosen + besides) * SLACK) + MARGIN_BYTES
    return HandoverPlan(chosen, min(host_bytes, wanted), fits=chosen <= fit)


class TimingSetPlanner:
    """``count(task, shape, device)``: of ``asked`` sets, how many fit in a share of the
    device's memory (``timing.timing_set_count``); a device's memory is asked for once
    (``memory_of``), and split between the candidates that share it."""

    def __init__(self, asked: int, sharing: int,
                 memory_of: Callable[[str], int | None],
                 handover_bytes: int | None = None) -> None:
        self.asked, self.sharing, self.memory_of = max(1, asked), max(1, sharing), memory_of
        self.handover_bytes = handover_bytes
        self._memory: dict[str, int | None] = {}
        self._bytes: dict[tuple[str, str | None, str], tuple[int, int, bool]] = {}
        self._lock = threading.Lock()

    def sizes(self, task: TaskRef, shape: dict[str, Any]) -> tuple[int, int, bool]:
        """(input bytes, output bytes, whether the outputs are exact) of one call."""
        key = (str(task.path), task.sha256, repr(sorted(shape.items())))
        with self._lock:
            if key not in self._bytes:
                self._bytes[key] = _footprint(task, shape)
            return self._bytes[key]

    def count(self, task: TaskRef, shape: dict[str, Any], device: str) -> int:
        if device == "cpu":
            return 1
        with self._lock:
            if device not in self._memory:
                self._memory[device] = self.memory_of(device)
            memory = self._memory[device]
        inputs, outputs, _ = self.sizes(task, shape)
        if memory and inputs + outputs:
            return timing_set_count(self.asked, inputs + outputs, memory // self.sharing)
        return self.asked

    def handover(self, task: TaskRef, shape: dict[str, Any], device: str, trials: int,
                 min_trials: int) -> HandoverPlan:
        """The trials and handed-over bytes of a request timed at ``shape`` (its largest)."""
        host = self.handover_bytes or handover_limit(1)
        inputs, outputs, exact = self.sizes(task, shape)
        if device == "cpu":  # the inputs after each call are handed over too
            return plan_handover(inputs + outputs if exact else None, trials, min_trials,
                                 host, "cpu")
        return plan_handover(outputs if exact else None, trials, min_trials, host, "cuda")
