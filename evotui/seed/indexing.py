"""Addressing an operand in a kernel that sees its tensor as a few groups of consecutive
dimensions, each walked by one flat index (the reduction and scan families' (OUTER, R,
INNER) view). Where the operand's dimensions in a group merge (one stride walks them) the
flat index times that stride is its offset; where they do not (a per-channel weight
broadcast over a group that also holds the space dimensions, as in a group norm) the flat
index is split back into its dimensions with a division and a modulo per dimension the
operand varies along: no broadcast copy of the operand is made."""

from __future__ import annotations

from dataclasses import dataclass

from evotui.seed.common import expanded_strides, merged_groups
from evotui.seed.graph import Node


@dataclass
class OperandIndex:
    """The offset of operand ``k`` (a kernel expression) and the scalars the kernel takes for
    it: their parameter names and, in the same order, the forward's expressions for them
    (in terms of ``a{k}``, the contiguous operand, and ``shape``, the full tensor's)."""

    offset: str
    params: list[str]
    values: list[str]


def operand_index(k: int, node: Node, shape: tuple[int, ...], groups: list[list[int]],
                  flat: list[str], letters: str = "ori") -> OperandIndex:
    """``groups`` partition ``shape``'s dimensions in order; ``flat[g]`` is the kernel's
    flat index over group ``g`` (a scalar or a broadcastable block)."""
    strides = expanded_strides(node, shape)
    expanded = f"a{k}.expand(shape)"
    terms: list[str] = []
    params: list[str] = []
    values: list[str] = []
    for g, (dims, var) in enumerate(zip(groups, flat, strict=True)):
        if merged_groups(shape, [strides], dims):
            name = f"s{k}_{letters[g]}"
            params.append(name)
            values.append(f"{expanded}.stride({dims[-1]})" if dims else "0")
            terms.append(f"{var} * {name}")
            continue
        real = [d for d in dims if shape[d] != 1]
        if not any(strides[d] for d in real):
            terms.append(f"{var} * 0")  # keeps the offset a block of the kernel's shape
        for d in real:
            if strides[d] == 0:
                continue
            t, q, n = f"t{k}_{d}", f"q{k}_{d}", f"n{k}_{d}"
            index = var
            if d != real[-1]:
                params.append(q)
                values.append(f"math.prod(shape[{d + 1}:{dims[-1] + 1}])")
                index = f"({index} // {q})"
            if d != real[0]:
                params.append(n)
                values.append(f"shape[{d}]")
                index = f"({index} % {n})"
            params.append(t)
            values.append(f"{expanded}.stride({d})")
            terms.append(f"{index} * {t}")
    return OperandIndex(" + ".join(terms) if terms else "0", params, values)
