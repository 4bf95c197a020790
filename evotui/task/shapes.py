"""Shapes for the CPU interpreter chosen from a task's own size constants.

A KernelBench file sets its sizes as module constants (``batch_size = 4096``, ``N = 2048 * 2``,
``input_shape = (32768,)``) that ``get_inputs``/``get_init_inputs`` read. The Triton
interpreter runs kernels in Python, so those sizes would take minutes a call. Here the
constants that ``get_inputs``/``get_init_inputs`` read are divided by one common factor
(their ratios kept, none below 16 unless it was already smaller) until inputs, outputs and
weights fit in about 1 MB and the FLOPs in about 5e7. Where 16 is still too big (a 3-D
transposed convolution: batch, channels and three spatial sizes of 16 multiply out to billions
of FLOPs), they go on shrinking down to 4. The footprint is measured on the meta device (no
memory, no arithmetic), so a file with 64 GB of inputs costs nothing to size.
"""

from __future__ import annotations

import logging
import types
from dataclasses import dataclass
from typing import Any

from evotui.task.constants import shape_overrides, size_constants
from evotui.task.errors import TaskError

CPU_BYTES_LIMIT = 2**20
CPU_FLOPS_LIMIT = 5e7
FLOOR = 16  # a constant is not shrunk below this (nor changed at all when it is smaller)
LAST_FLOOR = 4  # ... unless no shape at FLOOR fits
_MAX_STEPS = 24


@dataclass(frozen=True)
class Footprint:
    """What one reference call at a shape touches: measured on the meta device."""

    input_bytes: int
    output_bytes: int
    weight_bytes: int
    flops: float
    exact: bool = True  # False: the forward could not run on the meta device (outputs, FLOPs unknown)

    @property
    def total_bytes(self) -> int:
        return self.input_bytes + self.output_bytes + self.weight_bytes

    def fits_cpu(self) -> bool:
        return self.total_bytes <= CPU_BYTES_LIMIT and self.flops <= CPU_FLOPS_LIMIT

    def describe(self) -> str:
        flops = f"{self.flops:.2g} FLOPs" if self.exact else "FLOPs unknown"
        outs = _mb(self.output_bytes) if self.exact else "? MB"
        return (f"inputs {_mb(self.input_bytes)}, outputs {outs}, weights "
                f"{_mb(self.weight_bytes)}, {flops}")


@dataclass(frozen=True)
class CpuShape:
    shape: dict[str, Any]
    footprint: Footprint
    original: dict[str, Any]  # the chosen constants' values in the file

    def note(self) -> str:
        changed = [f"{k}={_text(v)} (from {_text(self.original[k])})" for k, v in self.shape.items()
                   if self.original.get(k) != v]
        sizes = self.footprint.describe()
        if not changed:
            return f"CPU shape: the file's own ({sizes})"
        return (f"CPU shape: {', '.join(changed)}: {sizes}; --shape NAME=VALUE sets a constant "
                "yourself")


def footprint(module: types.ModuleType, shape: dict[str, Any]) -> Footprint:
    """Bytes of inputs, outputs and weights and the FLOPs of one call at ``shape``; raises
    ``TaskError`` when the task's code fails at that shape."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    logging.getLogger("torch._subclasses.fake_tensor").setLevel(logging.CRITICAL)
    with shape_overrides(module, shape), torch.device("meta"):
        try:
            inputs = list(module.get_inputs())
            init = list(module.get_init_inputs())
            model = module.Model(*init)
        except Exception as e:  # noqa: BLE001 - the task's code at this shape
            raise TaskError(f"{type(e).__name__}: {e}") from None
        weights = sum(_nbytes(t) for t in list(model.parameters()) + list(model.buffers()))
        in_bytes = sum(_nbytes(t) for t in inputs)
        try:
            counter = FlopCounterMode(display=False)
            with counter, torch.no_grad():
                out = model(*inputs)
        except Exception:  # noqa: BLE001 - an op without a meta kernel: estimate from inputs
            return Footprint(in_bytes, 0, weights, 0.0, exact=False)
    outs = out if isinstance(out, list | tuple) else [out]
    return Footprint(in_bytes, sum(_nbytes(t) for t in outs), weights,
                     float(counter.get_total_flops()))


def choose_cpu_shape(module: types.ModuleType, fixed: dict[str, Any]) -> CpuShape:
    """The least-shrunk shape that fits the interpreter; ``fixed`` constants are kept."""
    consts = {k: v for k, v in size_constants(module).items() if k not in fixed}
    runs_on_meta = False
    scale, floor = 1, FLOOR
    best: CpuShape | None = None
    for _ in range(_MAX_STEPS):
        shape = {**{k: _scaled(v, scale, floor) for k, v in consts.items()}, **fixed}
        try:
            fp = footprint(module, shape)
            if scale == 1:
                runs_on_meta = fp.exact
            elif runs_on_meta and not fp.exact:  # the model fails at this shape
                raise TaskError(f"the model does not run at {shape}")
        except TaskError:
            pass
        else:
            best = CpuShape({k: v for k, v in shape.items() if k in consts or k in fixed}, fp,
                            {k: module.__dict__.get(k) for k in shape})
            if fp.fits_cpu():
                return best
        if all(_scaled(v, scale, floor) == _scaled(v, scale * 2, floor) for v in consts.values()):
            if floor == LAST_FLOOR:
                break
            floor = LAST_FLOOR  # the same scale again, with room below FLOOR
            continue
        scale *= 2
    if best is not None:
        return best
    # the task's code fails whatever the sizes: the file's own shape, where the preflight
    # names the failing step (get_inputs(), Model(...), forward)
    return CpuShape(dict(fixed), Footprint(0, 0, 0, 0.0, exact=False), {})


def _scaled(value: Any, scale: int, floor: int = FLOOR) -> Any:
    if isinstance(value, tuple):
        return tuple(_scaled(v, scale, floor) for v in value)
    if value < FLOOR:  # a small constant (a kernel size, a group count) is never changed
        return value
    return max(floor, value // scale)


def _nbytes(t: Any) -> int:
    import torch

    return t.numel() * t.element_size() if isinstance(t, torch.Tensor) else 0


def _mb(n: int) -> str:
    if n >= 10 * 2**20:
        return f"{n / 2**20:.0f} MB"
    return f"{n / 2**20:.1f} MB" if n >= 2**17 else f"{n / 1024:.0f} KB"


def _text(v: Any) -> str:
    return str(v)
