"""Run a task's own code once, small, before any candidate: a task that cannot make its
inputs or compute its reference is the user's to fix (exit 2 with the task's error), not a
rejected candidate; and a task too big for the CPU interpreter says so at once, naming the
file's own size constants, instead of timing out on the seed.
"""

from __future__ import annotations

import time
from typing import Any

from evotui.task.constants import shape_overrides, size_constants
from evotui.task.errors import TaskError
from evotui.task.model import TaskRef, make_init_inputs, task_module
from evotui.task.shapes import Footprint, footprint

# what the Triton interpreter gets through in seconds per call (64 MB took ~30 s a call)
CPU_INPUT_LIMIT_BYTES = 64 * 2**20
CPU_FLOPS_REFUSED = 4e9


def preflight(task: TaskRef, cpu: bool) -> str | None:
    """Raise ``TaskError`` naming the task's failing step, or the shape too big for the CPU.
    Returns a line for the user: on the CPU, the shape chosen and what one reference call
    there costs (the yardstick for a candidate's time)."""
    module = task_module(task.path, task.sha256)
    shapes = task.shapes("cpu" if cpu else "cuda")
    sizes = [_input_bytes(task, module, shape) for shape in shapes]
    if cpu:
        fp = _step(task, "the model at the CPU shape", lambda: footprint(module, shapes[0]))
        if fp.total_bytes > CPU_INPUT_LIMIT_BYTES or fp.flops > CPU_FLOPS_REFUSED:
            raise TaskError(_too_big(task, module, shapes[0], fp))
    smallest = shapes[sizes.index(min(sizes))]
    if min(sizes) > CPU_INPUT_LIMIT_BYTES:
        return None
    seconds = _reference_once(task, module, smallest)
    if not cpu:
        return None
    if task.meta.cpu_shapes:
        chosen = ", ".join(f"{k}={v}" for k, v in shapes[0].items())
        note = f"CPU shape: {chosen} (the task's cpu_shapes): {fp.describe()}"
    else:
        note = task.cpu_shape().note()
    return f"{note}; the reference takes {_secs(seconds)} a call there"


def _too_big(task: TaskRef, module: Any, shape: dict[str, Any], fp: Footprint) -> str:
    consts = size_constants(module)
    at = ", ".join(f"{k}={v}" for k, v in shape.items()) or "the file's own shape"
    if consts:
        names = ", ".join(f"{k}={v!r}" for k, v in consts.items())
        fix = (f"set smaller sizes with --shape NAME=VALUE (the file's size constants: {names})"
               if shape or not task.overrides else "choose smaller --shape values")
    else:
        fix = ("its sizes are not module constants that get_inputs reads, so none can be "
               "shrunk: give the task small CPU shapes (EVOTUI = {'cpu_shapes': [...]})")
    return (f"{task.path}: {fp.describe()} at {at} on the CPU: too much for the Triton "
            f"interpreter (it would time out); {fix}, or use a GPU")


def _input_bytes(task: TaskRef, module: Any, shape: dict[str, Any]) -> int:
    """What ``get_inputs`` allocates at ``shape``, measured on the meta device (no memory)."""
    import torch

    with shape_overrides(module, shape), torch.device("meta"):
        values = _step(task, "get_inputs()", module.get_inputs)
    if not isinstance(values, list | tuple):
        raise TaskError(f"{task.path}: get_inputs() returned a {type(values).__name__}, not a list")
    return sum(v.numel() * v.element_size() for v in values if isinstance(v, torch.Tensor))


def _reference_once(task: TaskRef, module: Any, shape: dict[str, Any]) -> float:
    import torch

    init = _step(task, "get_init_inputs()", lambda: make_init_inputs(module, shape))
    model = _step(task, "Model(*get_init_inputs())", lambda: module.Model(*init))
    with shape_overrides(module, shape):
        inputs = _step(task, "get_inputs()", module.get_inputs)
    start = time.perf_counter()
    with torch.no_grad():
        _step(task, "Model.forward", lambda: model(*inputs))
    return time.perf_counter() - start


def _secs(s: float) -> str:
    return f"{s * 1e3:.1f} ms" if s < 1 else f"{s:.1f} s"


def _step(task: TaskRef, what: str, fn: Any) -> Any:
    try:
        return fn()
    except TaskError as e:
        if what.startswith("the model"):
            raise TaskError(f"{task.path}: {what} failed: {e}") from None
        raise
    except Exception as e:  # noqa: BLE001 - the task's own code: the user's to fix
        raise TaskError(f"{task.path}: {what} raised {type(e).__name__}: {e}") from None
