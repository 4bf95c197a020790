"""The model's weights may not change while it is timed.

A kernel can write into the tensors it is given; into the task's weights, a low bit flipped
per call is a counter that survives between calls (laundered past the CUDA
C rules' read-only check, then "odd calls compute half the rows"), within tolerance of the
reference. Before every prepared call and after the last, every parameter is compared with
a copy taken before timing, bit for bit, on the device (no host sync: the result is read
once, after timing).
"""

from __future__ import annotations

from typing import Any

import torch

from evotui.eval.op_policy import PLAIN_TENSOR_TYPES, as_bits


def own_parameters(model: Any) -> list[tuple[str, torch.Tensor]]:
    """The named parameters of ``model`` and its submodules, read from their dicts: no
    method of the candidate's class runs (``parameters()`` could be overridden). A model the
    harness built (the CUDA C dialect's) names the task's weights it holds itself."""
    if type(model).__module__.startswith("evotui.dialects.") and hasattr(type(model), "guarded_tensors"):
        return [(n, t) for n, t in model.guarded_tensors() if type(t) in PLAIN_TENSOR_TYPES]
    out, seen, stack = [], set(), [("", model)]
    while stack:
        prefix, module = stack.pop()
        if id(module) in seen or not isinstance(module, torch.nn.Module):
            continue
        seen.add(id(module))
        fields = object.__getattribute__(module, "__dict__")
        params, children = fields.get("_parameters"), fields.get("_modules")
        if type(params) is dict:
            out += [(prefix + str(n), p) for n, p in dict.items(params)
                    if type(p) in PLAIN_TENSOR_TYPES]
        if type(children) is dict:
            stack += [(f"{prefix}{n}.", m) for n, m in dict.items(children)]
    return out


class WeightGuard:
    def __init__(self, model: Any) -> None:
        named = own_parameters(model)
        self.names = [n for n, _ in named]
        self.params = [p for _, p in named]
        self.copies = [as_bits(p).clone() for p in self.params]
        self.changed = [torch.zeros((), dtype=torch.bool, device=p.device) for p in self.params]

    def check(self) -> None:
        for changed, p, copy in zip(self.changed, self.params, self.copies, strict=True):
            changed |= (as_bits(p) != copy).any()

    def changed_names(self) -> list[str]:
        """The parameters that differed at some check (reads the device once)."""
        return [n for n, c in zip(self.names, self.changed, strict=True) if bool(c)]
