"""How many timed input sets an evaluation gets on a GPU. Decided by the pool (the trusted
parent), once per task, shape and device, from the task's footprint on the meta device and
the GPU's memory, and sent in the request: the worker times exactly those sets and the
judge checks exactly those, so neither works it out again.

Every output a candidate hands over (trials, timed sets, rechecks) is a sealed memfd, in the
host's memory until the judge has read it and the worker has let it go, all while the
candidate holds its device's gate; so the sets are also bounded by the host's memory, split
between the gates (``handover_limit``)."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any

from evotui.eval.timing import timing_set_count
from evotui.task.model import TaskError, TaskRef, task_module
from evotui.task.shapes import footprint

# outputs handed over besides one per timed set: the ghost, graph, recheck and verify calls
HANDOVERS_BESIDES_SETS = 4


def set_bytes(task: TaskRef, shape: dict[str, Any]) -> int:
    """One timed set's bytes on the device: its inputs and the outputs a call writes (twice
    the inputs where the forward cannot run on the meta device)."""
    inputs, outputs = _footprint(task, shape)
    return inputs + outputs


def _footprint(task: TaskRef, shape: dict[str, Any]) -> tuple[int, int]:
    try:
        module = task_module(task.path, task.sha256)
        fp = footprint(module, shape)
    except TaskError:  # the evaluation says what is wrong with the task
        return 0, 0
    return fp.input_bytes, (fp.output_bytes if fp.exact else fp.input_bytes)


def host_memory_bytes() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return None


def handover_limit(gates: int, host_bytes: int | None = None) -> int:
    """What one candidate may hand over in all: half the host's memory, split between the
    ``gates`` (one per device: only the candidate holding it has outputs in the host)."""
    host = host_bytes if host_bytes is not None else host_memory_bytes()
    return (host or 16 << 30) // 2 // max(1, gates)


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
        self._bytes: dict[tuple[str, str | None, str], tuple[int, int]] = {}
        self._lock = threading.Lock()

    def count(self, task: TaskRef, shape: dict[str, Any], device: str, trials: int = 0) -> int:
        """``trials``: the outputs the request hands over before its timed sets."""
        if device == "cpu":
            return 1
        with self._lock:
            if device not in self._memory:
                self._memory[device] = self.memory_of(device)
            memory = self._memory[device]
            key = (str(task.path), task.sha256, repr(sorted(shape.items())))
            if key not in self._bytes:
                self._bytes[key] = _footprint(task, shape)
            inputs, outputs = self._bytes[key]
        sets = self.asked
        if memory and inputs + outputs:
            sets = timing_set_count(self.asked, inputs + outputs, memory // self.sharing)
        if self.handover_bytes and outputs:
            fit = self.handover_bytes // outputs - trials - HANDOVERS_BESIDES_SETS
            sets = max(1, min(sets, fit))
        return sets
