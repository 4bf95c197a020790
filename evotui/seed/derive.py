"""A seed candidate derived from a task's reference ``Model``, for runs without a model:
trace it at a small shape (and at others where a traced number could be an input's size,
``evotui.seed.sizes``), pick the template family that fits (matrix product or convolution
with an epilogue, row reduction / norm / softmax, pooling, scan, element-wise chain) and fill
it in. What cannot be derived gives one line saying why."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import evotui.seed.conv as conv
import evotui.seed.elementwise as elementwise
import evotui.seed.gemm as gemm
import evotui.seed.pool as pool
import evotui.seed.reduction as reduction
import evotui.seed.scan as scan
import evotui.seed.stages as stages
from evotui.seed.common import assemble, init_source
from evotui.seed.graph import Graph, NotDerivable
from evotui.seed.sizes import follow_sizes
from evotui.seed.trace import build_graph

FAMILIES = (("gemm", gemm), ("convolution", conv), ("reduction", reduction), ("pooling", pool),
            ("scan", scan), ("elementwise", elementwise))


@dataclass(frozen=True)
class DerivedSeed:
    """A derived candidate (``source``) and its template family, or why there is none."""

    source: str | None
    family: str | None
    reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.source is not None


def derive_seed(task: Any, shape: dict[str, Any] | None = None) -> DerivedSeed:
    """``task`` is a ``TaskRef``; ``shape`` the constants to trace at (default: its first
    CPU shape, small enough to trace quickly)."""
    from evotui.task.model import TaskError, make_init_inputs, make_inputs, task_module

    def built(at: dict[str, Any]) -> tuple[Any, list[Any]]:
        import torch

        init = make_init_inputs(module, at)
        torch.manual_seed(0)
        model = module.Model(*init).eval()  # the judge's reference runs in eval mode
        return model, make_inputs(module, at, 1)

    def retrace(at: dict[str, Any]) -> Graph | None:
        try:
            return build_graph(*built(at), task.meta.allow_torch)
        except Exception:  # noqa: BLE001 - a shape the model refuses tells nothing
            return None

    try:
        module = task_module(task.path, task.sha256)
        shape = task.shapes("cpu")[0] if shape is None else shape
        model, inputs = built(shape)
    except TaskError as e:
        return DerivedSeed(None, None, str(e))
    except Exception as e:  # noqa: BLE001 - the task's own code: a reason, not a crash
        return DerivedSeed(None, None, f"the reference could not be built ({type(e).__name__}: {e})")
    try:
        graph = follow_sizes(build_graph(model, inputs, task.meta.allow_torch), shape, retrace)
        steps = stages.plan(graph, _identifier(task.name) + "_kernel", pick_family)
        parts, methods = stages.merge(steps)
        init_src, consts = init_source(module.Model)
        family = "+".join(s.family for s in steps)
        return DerivedSeed(assemble(parts, init_src, consts, graph.forward_params, methods),
                           family)
    except NotDerivable as e:
        return DerivedSeed(None, None, str(e))
    except Exception as e:  # noqa: BLE001 - a gap in the generator: one line, never a crash
        return DerivedSeed(None, None, f"the seed generator failed ({type(e).__name__}: {e})")


def pick_family(graph: Graph) -> tuple[str, Any]:
    for family, module in FAMILIES:
        if module.fits(graph):
            return family, module
    kinds = sorted({n.kind for n in graph.nodes})
    raise NotDerivable(f"no template fits this mix of ops ({', '.join(kinds)})")


def _identifier(name: str) -> str:
    ident = re.sub(r"\W+", "_", name).strip("_").lower() or "derived"
    return ident if not ident[0].isdigit() else f"k{ident}"
