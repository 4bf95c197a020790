"""The element-wise family: any chain of element-wise ops over inputs and parameters
broadcast to one shape, fused into one flat kernel (BLOCK_SIZE elements per program)."""

from __future__ import annotations

import evotui.seed.codegen as codegen
from evotui.seed.common import (
    Operands,
    Parts,
    Tunable,
    check_computed,
    expanded_strides,
    is_external,
    merged_groups,
    peel_output_views,
    replay_chain,
    template,
    unit_dims,
)
from evotui.seed.graph import Graph, Node, NotDerivable

TUNABLES = [Tunable("BLOCK_SIZE", 1024, [128, 256, 512, 1024, 2048, 4096, 8192]),
            Tunable("NUM_WARPS", 4, [1, 2, 4, 8, 16])]


def fits(graph: Graph) -> bool:
    return all(n.kind in ("input", "param", "ew", "view", "torch") for n in graph.nodes)


def derive(graph: Graph, kernel: str) -> Parts:
    bases, chains = peel_output_views(graph)
    for b in bases:
        check_computed(b)
    shape = bases[0].shape
    if any(b.shape != shape for b in bases):
        raise NotDerivable("outputs of different shapes: no element-wise template for them")
    exts = _externals(graph, bases)
    for e in exts:
        if len(e.shape) > len(shape) or any(
                a != b and a != 1 for a, b in zip(reversed(e.shape), reversed(shape), strict=False)):
            raise NotDerivable("an operand that does not broadcast to the output's shape")
    groups = _groups(shape, [expanded_strides(e, shape) for e in exts if e.shape != shape])
    units = unit_dims(shape, groups)
    groups = [g for g, u in zip(groups, units, strict=True) if u is not None]
    units = [u for u in units if u is not None]
    flat = [e for e in exts if e.shape == shape]

    ops = Operands(graph)
    fwd: list[str] = []
    ptrs, strides, loads = [], [], {}
    for k, e in enumerate(exts):
        ptrs.append(f"in{k}_ptr")
        if e in flat:
            idx = "offs"
        else:
            names = [f"s{k}_{g}" for g in range(len(groups))]
            strides += names
            idx = " + ".join(f"i{g} * {s}" for g, s in enumerate(names)) or "offs * 0"
        loads[e] = f"tl.load(in{k}_ptr + {idx}, mask=mask, other=0.0).to(tl.float32)"
    body: list[str] = []
    if groups and len(flat) < len(exts):
        body.append("    rem = offs")
        for g in range(len(groups) - 1, 0, -1):
            body.append(f"    i{g} = rem % size{g}")
            body.append(f"    rem = rem // size{g}")
        body.append("    i0 = rem")
    names = codegen.emit(bases, {}, graph.nodes, lambda n: loads[n], is_external, body, "    ")
    outs = [f"out{k}_ptr" for k in range(len(bases))]
    for k, b in enumerate(bases):
        body.append(f"    tl.store(out{k}_ptr + offs, {names[b]}.to(out{k}_ptr.dtype.element_ty), "
                    "mask=mask)")
    sizes = [f"size{g}" for g in range(1, len(groups))]
    args = ", ".join(ptrs + outs + ["n_elements"] + sizes + strides)
    kernel_src = template("elementwise.py.tmpl").substitute(kernel=kernel, args=args,
                                                            body="\n".join(body))

    tensors = [f"{ops.name(e)}.contiguous()" for e in exts]
    fwd.extend(ops.lines)
    for k, t in enumerate(tensors):
        fwd.append(f"a{k} = {t}")
    fwd.append(f"shape = torch.broadcast_shapes({', '.join(f'a{k}.shape' for k in range(len(exts)))})"
               if exts else f"shape = {tuple(shape)}")
    call = [f"a{k}" for k in range(len(exts))]
    for k, b in enumerate(bases):
        fwd.append(f"y{k} = torch.empty(shape, dtype={b.dtype}, device=a0.device)")
    call += [f"y{k}" for k in range(len(bases))] + ["y0.numel()"]
    call += [f"math.prod(shape[d] for d in {g})" for g in groups[1:]]
    for k, e in enumerate(exts):
        if e not in flat:
            call += [f"a{k}.expand(shape).stride({u})" for u in units]
    fwd.append("grid = (triton.cdiv(y0.numel(), BLOCK_SIZE),)")
    fwd.append(f"{kernel}[grid]({', '.join(call)}, BLOCK=BLOCK_SIZE, num_warps=NUM_WARPS)")
    results = []
    for k, (b, chain) in enumerate(zip(bases, chains, strict=True)):
        fwd.extend(replay_chain(f"y{k}", b, chain, ops))
        results.append(chain[-1].name if chain else f"y{k}")
    fwd.append(f"return {', '.join(results)}")
    ops_text = ", ".join(dict.fromkeys(n.op for n in graph.nodes if n.kind == "ew"))
    doc = (f"Derived from the reference: one fused element-wise kernel ({ops_text}),\n"
           "BLOCK_SIZE elements per program, computed in fp32.\nKnobs: BLOCK_SIZE, NUM_WARPS.")
    return Parts(doc=doc, kernels=[kernel_src], tunables=list(TUNABLES), forward=fwd)


def _externals(graph: Graph, bases: list[Node]) -> list[Node]:
    seen: list[Node] = []
    stack = list(bases)
    visited: set[Node] = set()
    while stack:
        n = stack.pop()
        if n in visited:
            continue
        visited.add(n)
        if is_external(n):
            seen.append(n)
        else:
            stack.extend(n.inputs())
    order = {n: i for i, n in enumerate(graph.nodes)}
    return sorted(seen, key=order.__getitem__)


def _groups(shape: tuple[int, ...], strides: list[tuple[int, ...]]) -> list[list[int]]:
    """Consecutive dimensions merged while every operand indexes them with one stride."""
    groups: list[list[int]] = []
    for d in range(len(shape)):
        if groups and merged_groups(shape, strides, groups[-1] + [d]):
            groups[-1].append(d)
        else:
            groups.append([d])
    return groups
