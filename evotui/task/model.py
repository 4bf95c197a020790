"""Loading tasks: KernelBench-format Python files plus optional evotui metadata.

A task file defines ``class Model(nn.Module)``, ``get_inputs()`` and ``get_init_inputs()``
(KernelBench files load unchanged). It may also define a module-level dict ``EVOTUI``::

    EVOTUI = {
        "name": "softmax",                 # default: the folder or file name
        "kind": "softmax",                 # kernel family, used by advice retrieval
        "tags": ["reduction", "row-wise"],
        "atol": 1e-4, "rtol": 1e-4,        # default: by output dtype
        "check_shapes": [{"batch_size": 1000, "dim": 3001}],  # extra correctness shapes
        "cpu_shapes": [{"batch_size": 16, "dim": 257}],       # shapes for the CPU interpreter
        "roofline": lambda inputs, outputs: {"bytes": ..., "flops": ...},
        "allow_torch": ["aten::mm"],       # torch ops a candidate may call in forward
    }

A *shape* is a dict of overrides for the module's global constants (``batch_size``, ``dim``,
...), applied before ``get_inputs()``/``get_init_inputs()`` are called; the empty dict is
the benchmark shape. A task folder holds the task file (``task.py``, or the only ``*.py``
that is not a candidate) and optionally a seed candidate (``seed.py``).
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from evotui.task.constants import shape_overrides, size_constants
from evotui.task.errors import TaskChanged, TaskError
from evotui.task.loading import load_module, task_module

SEED_NAMES = ("seed.py", "seed_triton.py", "seed_cuda.py")  # the first one present is the default
_CANDIDATE_HINTS = ("seed", "candidate", "best", "new")


@dataclass(frozen=True)
class TaskMeta:
    name: str
    kind: str
    tags: tuple[str, ...] = ()
    atol: float | None = None
    rtol: float | None = None
    check_shapes: tuple[dict[str, Any], ...] = ()
    cpu_shapes: tuple[dict[str, Any], ...] = ()
    allow_torch: tuple[str, ...] = ()
    has_roofline: bool = False


@dataclass(frozen=True)
class TaskRef:
    """Where a task lives; cheap to pass between processes."""

    path: Path
    seed_path: Path | None = None
    meta: TaskMeta = field(default_factory=lambda: TaskMeta(name="task", kind="generic"))
    # of the text loaded when the task was resolved: the judge computes references only
    # from that text (a candidate could rewrite task.py on disk to choose the reference)
    sha256: str | None = None
    # module constants set from the command line (--shape NAME=VALUE), at every shape
    overrides: tuple[tuple[str, Any], ...] = ()

    @property
    def name(self) -> str:
        return self.meta.name

    def source(self) -> str:
        return self.path.read_text()

    def shapes(self, device_type: str) -> list[dict[str, Any]]:
        """Shapes to check on this device; the first is the one that is timed. On the CPU,
        a task without ``cpu_shapes`` gets its size constants shrunk (``cpu_shape``)."""
        fixed = dict(self.overrides)
        if device_type == "cpu":
            if self.meta.cpu_shapes:
                return [{**s, **fixed} for s in self.meta.cpu_shapes]
            return [dict(self.cpu_shape().shape)]
        return [{**s, **fixed} for s in [{}, *self.meta.check_shapes]]

    def cpu_shape(self) -> Any:
        """The shape chosen for the interpreter (``evotui.task.shapes.CpuShape``), computed once."""
        key = (str(self.path), self.sha256, self.overrides)
        if key not in _CPU_SHAPES:
            from evotui.task.shapes import choose_cpu_shape

            module = task_module(self.path, self.sha256)
            _CPU_SHAPES[key] = choose_cpu_shape(module, dict(self.overrides))
        return _CPU_SHAPES[key]


_CPU_SHAPES: dict[tuple[Any, ...], Any] = {}


def resolve_task(path: str | Path, shape: dict[str, Any] | None = None,
                 allow_torch: tuple[str, ...] = ()) -> TaskRef:
    """Find the task file (a file, or a folder holding one), load it once and read its
    metadata. ``shape`` sets module constants at every shape (``--shape``); ``allow_torch``
    adds torch ops candidates may call (``--allow-torch``)."""
    p = Path(path).expanduser()
    if not p.exists():
        raise TaskError(f"task not found: {p}")
    seed: Path | None = None
    if p.is_dir():
        task_file = _find_task_file(p)
        for name in SEED_NAMES:
            if (p / name).is_file():
                seed = p / name
                break
    else:
        task_file = p
        for name in SEED_NAMES:
            if (p.parent / name).is_file() and (p.parent / name) != p:
                seed = p.parent / name
                break
    module = task_module(task_file.resolve())
    meta = read_meta(module, default_name=p.name if p.is_dir() else p.stem)
    if allow_torch:
        meta = replace(meta, allow_torch=tuple(dict.fromkeys(meta.allow_torch + allow_torch)))
    overrides = _checked_overrides(module, task_file, shape or {})
    return TaskRef(path=task_file.resolve(), seed_path=seed.resolve() if seed else None, meta=meta,
                   sha256=module.__evotui_sha256__, overrides=overrides)


def _checked_overrides(module: types.ModuleType, path: Path,
                       shape: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    known = size_constants(module)
    for name, value in shape.items():
        if name not in known:
            names = ", ".join(known) or "none"
            raise TaskError(f"--shape {name}=...: {path.name} has no size constant {name} "
                            f"(its constants: {names})")
        if isinstance(known[name], tuple) != isinstance(value, tuple):
            raise TaskError(f"--shape {name}: give {'a tuple such as 16,32' if isinstance(known[name], tuple) else 'an integer'}, like the file's {name} = {known[name]!r}")
    return tuple(sorted(shape.items()))


def _find_task_file(folder: Path) -> Path:
    if (folder / "task.py").is_file():
        return folder / "task.py"
    pys = [f for f in sorted(folder.glob("*.py")) if not any(h in f.stem for h in _CANDIDATE_HINTS)]
    if len(pys) == 1:
        return pys[0]
    if not pys:
        raise TaskError(f"no task file in {folder} (expected task.py)")
    raise TaskError(f"several task files in {folder}: {', '.join(f.name for f in pys)}; name one")


def read_meta(module: types.ModuleType, default_name: str) -> TaskMeta:
    raw = getattr(module, "EVOTUI", {}) or {}
    if not isinstance(raw, dict):
        raise TaskError("EVOTUI metadata must be a dict")

    def shapes(key: str) -> tuple[dict[str, Any], ...]:
        value = raw.get(key, ())
        if not isinstance(value, list | tuple) or not all(isinstance(s, dict) for s in value):
            raise TaskError(f"EVOTUI[{key!r}] must be a list of dicts of module constants")
        for s in value:
            unknown = [k for k in s if k not in module.__dict__]
            if unknown:
                raise TaskError(f"EVOTUI[{key!r}] names unknown module constants: {unknown}")
        return tuple(value)

    name = str(raw.get("name", default_name))
    return TaskMeta(
        name=name,
        kind=str(raw.get("kind", name)),
        tags=tuple(str(t) for t in raw.get("tags", ())),
        atol=_opt_float(raw.get("atol")),
        rtol=_opt_float(raw.get("rtol")),
        check_shapes=shapes("check_shapes"),
        cpu_shapes=shapes("cpu_shapes"),
        allow_torch=tuple(str(a) for a in raw.get("allow_torch", ())),
        has_roofline=callable(raw.get("roofline")),
    )


def _opt_float(v: Any) -> float | None:
    if v is None:
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        raise TaskError(f"tolerance must be a number, got {v!r}") from None


SEED_AFTER_INPUTS = 0x5EED


def make_inputs(module: types.ModuleType, shape: dict[str, Any], seed: int,
                device: Any = None) -> list[Any]:
    """The task's inputs for one seed. With ``device``, factory calls in ``get_inputs`` that
    name no device allocate there (generating 256 MB of randn on the host takes a second);
    the judge and the worker use the same device type, so they see the same values."""
    import torch

    try:
        with shape_overrides(module, shape):
            torch.manual_seed(seed)
            if device is None or torch.device(device).type == "cpu":
                return list(module.get_inputs())
            with torch.device(device):
                values = list(module.get_inputs())
            return [v.to(device) if isinstance(v, torch.Tensor) else v for v in values]
    finally:
        # the same global seed after every set of inputs: a candidate reading it
        # (torch.initial_seed) cannot tell checked calls from timed ones
        torch.manual_seed(SEED_AFTER_INPUTS)


def make_init_inputs(module: types.ModuleType, shape: dict[str, Any]) -> list[Any]:
    with shape_overrides(module, shape):
        return list(module.get_init_inputs())


def roofline_of(module: types.ModuleType, inputs: list[Any], outputs: list[Any]) -> dict[str, float]:
    """Minimum bytes moved and FLOPs for one call; defaults to bytes of inputs + outputs."""
    import torch

    raw = getattr(module, "EVOTUI", {}) or {}
    fn = raw.get("roofline")
    if callable(fn):
        got = fn(inputs, outputs[0] if len(outputs) == 1 else outputs)
        return {"bytes": float(got.get("bytes", 0.0)), "flops": float(got.get("flops", 0.0))}
    total = sum(t.numel() * t.element_size() for t in list(inputs) + list(outputs)
                if isinstance(t, torch.Tensor))
    return {"bytes": float(total), "flops": 0.0}


__all__ = ["SEED_NAMES", "TaskChanged", "TaskError", "TaskMeta", "TaskRef", "load_module",
           "make_init_inputs", "make_inputs", "read_meta", "resolve_task", "roofline_of",
           "shape_overrides", "task_module"]
