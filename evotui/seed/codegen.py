"""Kernel-body code for a set of element-wise nodes: each needed value once, in
topological order, from the values already named (loads, reduction results)."""

from __future__ import annotations

from collections.abc import Callable

from evotui.seed.graph import Node, NotDerivable
from evotui.seed.ops import expression, operand_text


def needed(targets: list[Node], given: dict[Node, str], order: list[Node],
           stop: Callable[[Node], bool]) -> list[Node]:
    """The nodes to compute for ``targets``, in ``order``; ``stop`` nodes are loaded."""
    want: set[Node] = set()
    stack = list(targets)
    while stack:
        n = stack.pop()
        if n in want or n in given:
            continue
        want.add(n)
        if not stop(n):
            stack.extend(n.inputs())
    return [n for n in order if n in want]


def emit(targets: list[Node], given: dict[Node, str], order: list[Node],
         load: Callable[[Node], str], stop: Callable[[Node], bool], lines: list[str],
         indent: str, count: str = "R", prefix: str = "t") -> dict[Node, str]:
    """Append ``name = expr`` lines computing ``targets``; returns every name it made."""
    names = dict(given)
    for n in needed(targets, given, order, stop):
        var = f"{prefix}{n.name[1:]}"
        if stop(n):
            lines.append(f"{indent}{var} = {load(n)}")
        elif n.kind == "ew":
            operands = [operand_text(a, names) for a in n.args]
            lines.append(f"{indent}{var} = {expression(n, operands, count)}")
        else:
            raise NotDerivable(f"a {n.kind} value ({n.op}) where only element-wise ops fit")
        names[n] = var
    return names
