"""Graphs no single template covers, cut into stages: the longest prefix a template
derives (ending at one value), then the rest with that value as an input, up to
MAX_STAGES kernels. Each stage is a method of ModelNew; its intermediate tensor is
allocated by the stage that writes it."""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, replace
from typing import Any

from evotui.seed.common import Parts, Tunable, is_external
from evotui.seed.graph import Graph, Node, NotDerivable

MAX_STAGES = 5
_COMPUTED = ("ew", "reduce", "mm", "conv", "pool", "scan")
_MAX_ATTEMPTS = 400


@dataclass
class Stage:
    family: str
    parts: Parts
    params: list[str]


def plan(graph: Graph, kernel: str, pick: Any) -> list[Stage]:
    """One stage when a template takes the whole graph, else the fewest stages found."""
    budget = [_MAX_ATTEMPTS]
    return _plan(graph, kernel, pick, 0, budget)


def _single(graph: Graph, kernel: str, pick: Any) -> Stage:
    family, module = pick(graph)
    return Stage(family, module.derive(graph, kernel), list(graph.forward_params))


def _plan(graph: Graph, kernel: str, pick: Any, depth: int, budget: list[int]) -> list[Stage]:
    try:
        return [_single(graph, f"{kernel}{depth}" if depth else kernel, pick)]
    except NotDerivable as whole:
        if depth + 1 >= MAX_STAGES:
            raise
        first = whole
    for cut in reversed(graph.nodes):
        if cut.kind not in _COMPUTED or cut in graph.outputs or is_external(cut):
            continue
        budget[0] -= 1
        if budget[0] < 0:
            break
        try:
            head = _single(_prefix(graph, cut), f"{kernel}{depth}", pick)
        except NotDerivable:
            continue
        try:
            rest = _plan(_rest(graph, cut, depth), kernel, pick, depth + 1, budget)
        except NotDerivable:
            continue
        return [head] + rest
    raise first


def _prefix(graph: Graph, cut: Node) -> Graph:
    need: set[Node] = set()
    stack = [cut]
    while stack:
        n = stack.pop()
        if n not in need:
            need.add(n)
            stack.extend(n.inputs())
    return Graph([n for n in graph.nodes if n in need], [cut], list(graph.forward_params),
                 graph.n_inputs)


def _rest(graph: Graph, cut: Node, depth: int) -> Graph:
    params = list(graph.forward_params) + [f"stage{depth}"]
    fresh = Node(f"v{90000 + depth}", "input", "input", (), cut.shape, cut.dtype,
                 {"index": len(params) - 1})
    mapped: dict[Node, Node] = {cut: fresh}
    nodes: list[Node] = []
    for n in graph.nodes:
        if n is cut:
            nodes.append(fresh)
            continue
        args = tuple(mapped.get(a, a) if isinstance(a, Node) else a for a in n.args)
        attrs = {k: mapped.get(v, v) if isinstance(v, Node) else v for k, v in n.attrs.items()}
        new = replace(n, args=args, attrs=attrs) if args != n.args or attrs != n.attrs else n
        mapped[n] = new
        nodes.append(new)
    outputs = [mapped[o] for o in graph.outputs]
    keep: set[Node] = set()
    stack = list(outputs)
    while stack:
        n = stack.pop()
        if n not in keep:
            keep.add(n)
            stack.extend(n.inputs())
    return Graph([n for n in nodes if n in keep], outputs, params, len(params))


def merge(stages: list[Stage]) -> tuple[Parts, str]:
    """The stages as one candidate's parts: tunables renamed per stage, forward calling one
    method per stage. Returns the parts and the extra methods' source."""
    if len(stages) == 1:
        return stages[0].parts, ""
    kernels: list[str] = []
    tunables: list[Tunable] = []
    methods: list[str] = []
    for k, stage in enumerate(stages):
        lines = list(stage.parts.forward)
        for t in stage.parts.tunables:
            new = f"{t.name}_{k}"
            tunables.append(Tunable(new, t.value, t.choices))
            pattern = re.compile(rf"\b{t.name}\b(?!\s*=[^=])")
            lines = [pattern.sub(new, line) for line in lines]
        kernels += [s for s in stage.parts.kernels if s not in kernels]
        body = textwrap.indent("\n".join(lines), "    ")
        methods.append(f"def _stage{k}(self, {', '.join(stage.params)}):\n{body}\n")
    calls = []
    for k, stage in enumerate(stages):
        call = f"self._stage{k}({', '.join(stage.params)})"
        calls.append(f"stage{k} = {call}" if k < len(stages) - 1 else f"return {call}")
    doc = (f"Derived from the reference in {len(stages)} stages, each a kernel writing the "
           "next one's input:\n" + "\n".join(
               f"{k}: " + s.parts.doc.splitlines()[0].removeprefix("Derived from the reference: ")
               for k, s in enumerate(stages)) +
           "\nKnobs: each stage's, suffixed with its number.")
    return Parts(doc=doc, kernels=kernels, tunables=tunables, forward=calls), "\n".join(methods)
