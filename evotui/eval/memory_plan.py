"""How many timed input sets an evaluation gets on a GPU. Decided by the pool (the trusted
parent), once per task, shape and device, from the task's footprint on the meta device and
the GPU's memory, and sent in the request: the worker times exactly those sets and the
judge checks exactly those, so neither works it out again."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from evotui.eval.timing import timing_set_count
from evotui.task.model import TaskError, TaskRef, load_module
from evotui.task.shapes import footprint


def set_bytes(task: TaskRef, shape: dict[str, Any]) -> int:
    """One timed set's bytes on the device: its inputs and the outputs a call writes (twice
    the inputs where the forward cannot run on the meta device)."""
    try:
        module = load_module(task.path, "evotui_task_footprint", task.sha256)
        fp = footprint(module, shape)
    except TaskError:  # the evaluation says what is wrong with the task
        return 0
    return fp.input_bytes + (fp.output_bytes if fp.exact else fp.input_bytes)


class TimingSetPlanner:
    """``count(task, shape, device)``: of ``asked`` sets, how many fit in a share of the
    device's memory (``timing.timing_set_count``); a device's memory is asked for once
    (``memory_of``), and split between the candidates that share it."""

    def __init__(self, asked: int, sharing: int,
                 memory_of: Callable[[str], int | None]) -> None:
        self.asked, self.sharing, self.memory_of = max(1, asked), max(1, sharing), memory_of
        self._memory: dict[str, int | None] = {}
        self._bytes: dict[tuple[str, str | None, str], int] = {}
        self._lock = threading.Lock()

    def count(self, task: TaskRef, shape: dict[str, Any], device: str) -> int:
        if device == "cpu":
            return 1
        with self._lock:
            if device not in self._memory:
                self._memory[device] = self.memory_of(device)
            memory = self._memory[device]
            key = (str(task.path), task.sha256, repr(sorted(shape.items())))
            if key not in self._bytes:
                self._bytes[key] = set_bytes(task, shape)
            per_set = self._bytes[key]
        if not memory or not per_set:
            return self.asked
        return timing_set_count(self.asked, per_set, memory // self.sharing)
