"""Run a task's own code once, small, before any candidate: a task that cannot make its
inputs or compute its reference is the user's to fix (exit 2 with the task's error), not a
rejected candidate; and a task too big for the CPU interpreter says so at once instead of
timing out on the seed.
"""

from __future__ import annotations

from typing import Any

from evotui.task import TaskError, TaskRef, load_module, make_init_inputs, shape_overrides

# inputs the Triton interpreter gets through in seconds per call (64 MB took ~30 s a call)
CPU_INPUT_LIMIT_BYTES = 64 * 2**20


def preflight(task: TaskRef, cpu: bool) -> None:
    """Raise ``TaskError`` naming the task's failing step, or the shape too big for the CPU."""
    module = load_module(task.path, "evotui_task_preflight", task.sha256)
    shapes = task.shapes("cpu" if cpu else "cuda")
    sizes = [_input_bytes(task, module, shape) for shape in shapes]
    if cpu and sizes[0] > CPU_INPUT_LIMIT_BYTES:
        raise TaskError(
            f"{task.path}: inputs of {sizes[0] / 2**20:.0f} MB at the shape evaluated on the CPU, "
            "too much for the Triton interpreter (it would time out); give the task small CPU "
            "shapes, e.g. EVOTUI = {'cpu_shapes': [{'batch_size': 16, ...}]}, or use a GPU")
    smallest = shapes[sizes.index(min(sizes))]
    if min(sizes) <= CPU_INPUT_LIMIT_BYTES:
        _reference_once(task, module, smallest)


def _input_bytes(task: TaskRef, module: Any, shape: dict[str, Any]) -> int:
    """What ``get_inputs`` allocates at ``shape``, measured on the meta device (no memory)."""
    import torch

    with shape_overrides(module, shape), torch.device("meta"):
        values = _step(task, "get_inputs()", module.get_inputs)
    if not isinstance(values, list | tuple):
        raise TaskError(f"{task.path}: get_inputs() returned a {type(values).__name__}, not a list")
    return sum(v.numel() * v.element_size() for v in values if isinstance(v, torch.Tensor))


def _reference_once(task: TaskRef, module: Any, shape: dict[str, Any]) -> None:
    import torch

    init = _step(task, "get_init_inputs()", lambda: make_init_inputs(module, shape))
    model = _step(task, "Model(*get_init_inputs())", lambda: module.Model(*init))
    with shape_overrides(module, shape):
        inputs = _step(task, "get_inputs()", module.get_inputs)
    with torch.no_grad():
        _step(task, "Model.forward", lambda: model(*inputs))


def _step(task: TaskRef, what: str, fn: Any) -> Any:
    try:
        return fn()
    except TaskError:
        raise
    except Exception as e:  # noqa: BLE001 - the task's own code: the user's to fix
        raise TaskError(f"{task.path}: {what} raised {type(e).__name__}: {e}") from None
