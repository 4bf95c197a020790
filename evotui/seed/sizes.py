"""Numbers in the traced graph that are sizes of its inputs.

``torch.export`` turns ``x.size(0)`` into the number it was at the traced shape: ``kl_div(...,
reduction="batchmean")`` divides by the traced batch, ``x.sum(-1) * (1 / x.shape[-1])``
multiplies by a fixed fraction. A seed that kept the number would be wrong at every other
shape (the benchmark's among them). So where a scalar of an element-wise op could be such a
size, the reference is traced again with each size constant of the task doubled, one at a
time: a scalar that never moves is a constant; one that moves as a product of an input's
dimensions becomes that product, read from the input in the candidate's forward (a 0-d
tensor its kernels load); one that moves otherwise cannot be derived.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from evotui.seed.graph import Graph, Node, NotDerivable
from evotui.task.shapes import FLOOR

Retrace = Callable[[dict[str, Any]], Graph | None]  # the graph at another shape, or None


@dataclass(frozen=True)
class Spot:
    """A scalar argument of an element-wise node: the node's place in ``graph.nodes`` and
    the argument's place in its ``args``."""

    node: int
    arg: int


@dataclass(frozen=True)
class Size:
    """The product of dimensions ``lo``..``hi`` of the input at ``node`` (or its reciprocal)."""

    node: int
    lo: int
    hi: int
    reciprocal: bool

    def value(self, graph: Graph) -> float:
        n = math.prod(graph.nodes[self.node].shape[self.lo:self.hi + 1])
        return 1.0 / n if self.reciprocal else float(n)

    def expression(self) -> str:
        n = f"math.prod({{x}}.shape[{self.lo}:{self.hi + 1}])"
        value = f"1.0 / {n}" if self.reciprocal else f"float({n})"
        return f"torch.full((), {value}, dtype=torch.float32, device={{x}}.device)"


def follow_sizes(graph: Graph, shape: dict[str, Any], retrace: Retrace) -> Graph:
    """``graph`` (traced at ``shape``) with its scalars that are input sizes made to follow
    the input; unchanged where none could be."""
    candidates = {s: sizes for s in _scalar_spots(graph) if (sizes := _sizes_matching(graph, s))}
    if not candidates:
        return graph
    others = [g for g in (retrace({**shape, key: grown}) for key, grown in _grown(shape))
              if g is not None and _same_structure(graph, g)]
    if not others:
        return graph
    found: list[tuple[Spot, Size]] = []
    for spot, sizes in candidates.items():
        if all(math.isclose(_scalar(g, spot), _scalar(graph, spot), rel_tol=1e-9) for g in others):
            continue  # a constant that happens to equal a size
        size = next((c for c in sizes
                     if all(math.isclose(c.value(g), _scalar(g, spot), rel_tol=1e-9)
                            for g in others)), None)
        if size is None:
            op = graph.nodes[spot.node].op
            raise NotDerivable(f"a number in the reference's {op} changes with the input's size "
                               "but is no product of its dimensions: no template; pass --seed FILE")
        found.append((spot, size))
    # nodes, not places: each insertion moves the places after it
    resolved = [(graph.nodes[s.node], s.arg, graph.nodes[z.node], z) for s, z in found]
    for user, arg, source, size in resolved:
        _replace(graph, user, arg, source, size)
    return graph


def _scalar_spots(graph: Graph) -> Iterator[Spot]:
    for i, n in enumerate(graph.nodes):
        if n.kind != "ew":
            continue
        for j, a in enumerate(n.args):
            if isinstance(a, int | float) and not isinstance(a, bool) and abs(a) not in (0, 1):
                yield Spot(i, j)


def _scalar(graph: Graph, spot: Spot) -> float:
    return float(graph.nodes[spot.node].args[spot.arg])


def _sizes_matching(graph: Graph, spot: Spot) -> list[Size]:
    """The products of contiguous dimensions of an input that equal the scalar (or whose
    reciprocal does) at this graph's shape."""
    value = _scalar(graph, spot)
    found = []
    for i, n in enumerate(graph.nodes):
        if n.kind != "input":
            continue
        for lo in range(len(n.shape)):
            for hi in range(lo, len(n.shape)):
                for reciprocal in (False, True):
                    size = Size(i, lo, hi, reciprocal)
                    if math.isclose(size.value(graph), value, rel_tol=1e-9):
                        found.append(size)
    return found


def _grown(shape: dict[str, Any]) -> Iterator[tuple[str, Any]]:
    """Each size constant the CPU shape scales (the others stay as the file sets them),
    doubled."""
    for key, value in shape.items():
        if isinstance(value, bool):
            continue
        if isinstance(value, int) and value >= FLOOR:
            yield key, 2 * value
        elif isinstance(value, tuple) and any(isinstance(v, int) and v >= FLOOR for v in value):
            yield key, tuple(2 * v if isinstance(v, int) and v >= FLOOR else v for v in value)


def _same_structure(a: Graph, b: Graph) -> bool:
    """The same nodes in the same order, with numbers where the other has numbers."""
    def form(n: Node) -> tuple[Any, ...]:
        return (n.kind, n.op, tuple(isinstance(x, Node) for x in n.args))

    return len(a.nodes) == len(b.nodes) and all(
        form(x) == form(y) for x, y in zip(a.nodes, b.nodes, strict=True))


def _replace(graph: Graph, user: Node, arg: int, source: Node, size: Size) -> None:
    """``user``'s argument ``arg`` becomes ``size`` read from ``source`` in forward."""
    import torch

    node = Node(f"{source.name}_size_{user.name}", "view", "raw", (source,), (), torch.float32,
                {"expr": size.expression()})
    graph.nodes.insert(graph.nodes.index(source) + 1, node)
    args = list(user.args)
    args[arg] = node
    user.args = tuple(args)
