"""The small graph a seed is derived from: the reference's aten ops, rewritten into a few
kinds of node that the templates know (element-wise, reduction, matrix product, view)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# reduction ops and the value their accumulator starts from
REDUCE_OPS = ("sum", "max", "min", "argmax", "argmin")


class NotDerivable(Exception):
    """Why no seed can be derived: one line for the user."""


@dataclass(eq=False)
class Node:
    """One value of the reference's computation.

    kind: ``input`` (attrs index), ``param`` (attrs fqn: a parameter or buffer of the model),
    ``ew`` (element-wise op ``op`` over ``args``), ``reduce`` (op in REDUCE_OPS over attrs
    dims, keepdim), ``mm`` (batched or plain matrix product of args[0] @ args[1]),
    ``view`` (a torch view op ``op`` with attrs args, replayed in the candidate's forward),
    ``torch`` (an op the task lets candidates call through torch, attrs call).
    Arguments are Nodes or Python scalars."""

    name: str
    kind: str
    op: str
    args: tuple[Any, ...]
    shape: tuple[int, ...]
    dtype: Any  # torch.dtype
    attrs: dict[str, Any] = field(default_factory=dict)

    def inputs(self) -> list[Node]:
        return [a for a in self.args if isinstance(a, Node)]

    def __repr__(self) -> str:
        return f"{self.name}={self.kind}:{self.op}{list(self.shape)}"


@dataclass
class Graph:
    """Nodes in topological order; outputs are the model's returned values."""

    nodes: list[Node]
    outputs: list[Node]
    forward_params: list[str]  # names of Model.forward's parameters, in order
    n_inputs: int

    def users(self, node: Node) -> list[Node]:
        return [n for n in self.nodes if node in n.inputs()]

    def external(self) -> list[Node]:
        return [n for n in self.nodes if n.kind in ("input", "param")]
