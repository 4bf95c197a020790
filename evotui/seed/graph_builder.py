"""Building the seed graph (``graph.Node``) one node at a time: element-wise ops, reductions,
means and variances made of sums, raw views. The base of the aten rewrites
(pointwise_rewrites, composite_rewrites) and of the translator (trace)."""

from __future__ import annotations

from typing import Any

from evotui.seed.graph import Node


class GraphBuilder:
    """The nodes built so far, in order; each new one named v1, v2, ..."""

    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self.count = 0

    def add(self, kind: str, op: str, args: tuple[Any, ...], like: Any = None,
            shape: tuple[int, ...] | None = None, dtype: Any = None, **attrs: Any) -> Node:
        import torch

        if like is not None:
            shape, dtype = tuple(like.shape), like.dtype
        if shape is None:
            shape = _broadcast([a.shape for a in args if isinstance(a, Node)])
        if dtype is None:
            tensors = [a for a in args if isinstance(a, Node)]
            dtype = tensors[0].dtype if tensors else torch.float32
        self.count += 1
        node = Node(f"v{self.count}", kind, op, args, tuple(shape), dtype, dict(attrs))
        self.nodes.append(node)
        return node

    def ew(self, op: str, *args: Any, like: Any = None, **attrs: Any) -> Node:
        return self.add("ew", op, args, like=like, **attrs)

    def reduce(self, op: str, x: Node, dims: list[int], keepdim: bool) -> Node:
        rank = len(x.shape)
        dims = sorted({d % rank for d in dims}) if dims else list(range(rank))
        if keepdim and len(dims) > 1:  # reducing a dimension of size 1 changes nothing
            dims = [d for d in dims if x.shape[d] != 1] or dims[-1:]
        shape = tuple(1 if i in dims else s for i, s in enumerate(x.shape)
                      if keepdim or i not in dims)
        import torch

        dtype = torch.int64 if op in ("argmax", "argmin") else x.dtype
        return self.add("reduce", op, (x,), shape=shape, dtype=dtype, dims=dims,
                        keepdim=keepdim)

    def mean(self, x: Node, dims: list[int], keepdim: bool, correction: float = 0.0) -> Node:
        s = self.reduce("sum", x, dims, keepdim)
        return self.add("ew", "div_count", (s,), shape=s.shape, dtype=s.dtype,
                        correction=correction)

    def var(self, x: Node, dims: list[int], keepdim: bool, correction: float) -> Node:
        m = self.mean(x, dims, True)
        d = self.ew("sub", x, m, like=None)
        return self.mean(self.ew("mul", d, d), dims, keepdim, correction)

    def raw_view(self, x: Node, expr: str, shape: tuple[int, ...], ref: Node | None = None
                 ) -> Node:
        return self.add("view", "raw", (x,), shape=shape, dtype=x.dtype, expr=expr, ref=ref)


def _broadcast(shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    rank = max((len(s) for s in shapes), default=0)
    out = [1] * rank
    for s in shapes:
        for i, d in enumerate(s):
            j = rank - len(s) + i
            out[j] = d if out[j] == 1 else out[j]
    return tuple(out)
