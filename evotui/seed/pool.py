"""The pooling family: one max or average pooling window (1-D, 2-D, 3-D: kernel, stride,
padding, dilation from the reference), any element-wise prologue on its input and any
epilogue on its output, fused into one kernel over output elements. Window loops are
unrolled (tl.static_range); every operand is indexed per dimension with its own strides,
so broadcast parameters (a per-channel bias) need no copy."""

from __future__ import annotations

import evotui.seed.codegen as codegen
from evotui.seed.common import (
    Operands,
    Parts,
    Tunable,
    check_computed,
    is_external,
    peel_output_views,
    replay_chain,
    template,
)
from evotui.seed.graph import Graph, Node, NotDerivable

TUNABLES = [Tunable("BLOCK_SIZE", 256, [64, 128, 256, 512, 1024, 2048]),
            Tunable("NUM_WARPS", 4, [1, 2, 4, 8])]


def fits(graph: Graph) -> bool:
    kinds = {n.kind for n in graph.nodes}
    return "pool" in kinds and kinds <= {"input", "param", "ew", "view", "pool", "torch"}


def derive(graph: Graph, kernel: str) -> Parts:
    pools = [n for n in graph.nodes if n.kind == "pool"]
    if len(pools) > 1:
        raise NotDerivable(f"{len(pools)} pooling steps: no template for more than one")
    pool = pools[0]
    src = pool.args[0]
    bases, chains = peel_output_views(graph)
    if len(bases) != 1:
        raise NotDerivable("pooling with several outputs: no template")
    out = bases[0]
    check_computed(out)
    after = _downstream(graph, pool)
    for n in graph.nodes:
        if n.kind == "view" and not is_external(n) and n not in chains[0]:
            raise NotDerivable("a view in the middle of the computation: no template")
        if n.kind == "ew" and n not in after and n.shape != src.shape and n is not src:
            if not all(is_external(a) for a in n.inputs()):
                raise NotDerivable("an element-wise op of another shape before pooling")
    if out is not pool and out not in after:
        raise NotDerivable("the output does not depend on the pooling")
    d = len(pool.attrs["kernel"])
    in_shape, out_shape = src.shape, out.shape
    if pool.shape != out_shape:
        raise NotDerivable("an epilogue that changes the pooled shape: no template")
    lead = len(in_shape) - d
    pro_exts = _ext_inputs(graph, [src], stop=lambda n: False) if not is_external(src) else [src]
    epi_exts = [e for e in _ext_inputs(graph, [out], stop=lambda n: n is pool)
                if e not in pro_exts or e.shape == out_shape]
    for e, shape in [(e, in_shape) for e in pro_exts] + [(e, out_shape) for e in epi_exts]:
        if len(e.shape) > len(shape) or any(a not in (1, b) for a, b in zip(
                reversed(e.shape), reversed(shape), strict=False)):
            raise NotDerivable("an operand that does not broadcast to the pooled tensor")

    rank = len(in_shape)
    ptrs, strides = [], []
    pro_loads, epi_loads = {}, {}
    for k, e in enumerate(pro_exts):
        ptrs.append(f"p{k}_ptr")
        s = [f"sp{k}_{j}" for j in range(rank)]
        strides += s
        idx = " + ".join([f"l{j} * {s[j]}" for j in range(lead)] +
                         [f"i{j} * {s[lead + j]}" for j in range(d)])
        pro_loads[e] = f"tl.load(p{k}_ptr + {idx}, mask=valid, other=0.0).to(tl.float32)"
    for k, e in enumerate(epi_exts):
        ptrs.append(f"e{k}_ptr")
        s = [f"se{k}_{j}" for j in range(rank)]
        strides += s
        idx = " + ".join([f"l{j} * {s[j]}" for j in range(lead)] +
                         [f"o{j} * {s[lead + j]}" for j in range(d)])
        epi_loads[e] = f"tl.load(e{k}_ptr + {idx}, mask=mask, other=0.0).to(tl.float32)"
    body = _window(pool, d, lead, graph, src, pro_loads)
    names = codegen.emit([out], {pool: "pooled"}, graph.nodes, lambda n: epi_loads[n],
                         lambda n: n in epi_loads, body, "    ", prefix="u")
    body.append(f"    tl.store(out_ptr + offs, {names[out]}.to(out_ptr.dtype.element_ty), "
                "mask=mask)")
    sizes = ([f"L{j}" for j in range(1, lead)] + [f"S{j}" for j in range(d)] +
             [f"O{j}" for j in range(d)])
    args = ", ".join(ptrs + ["out_ptr", "n_out"] + sizes + strides)
    kernel_src = template("pool.py.tmpl").substitute(kernel=kernel, args=args,
                                                     body="\n".join(body))
    fwd = _forward(graph, kernel, src, pool, out, chains[0], pro_exts, epi_exts, lead, d)
    what = f"{pool.op} pooling {'x'.join(map(str, pool.attrs['kernel']))}"
    doc = (f"Derived from the reference: {what} with its element-wise prologue and epilogue\n"
           "fused, one output element per lane, the window unrolled, in fp32.\n"
           "Knobs: BLOCK_SIZE, NUM_WARPS.")
    return Parts(doc=doc, kernels=[kernel_src], tunables=list(TUNABLES), forward=fwd)


def _window(pool: Node, d: int, lead: int, graph: Graph, src: Node,
            loads: dict[Node, str]) -> list[str]:
    a = pool.attrs
    body = ["    rem = offs"]
    for j in range(d - 1, -1, -1):
        body += [f"    o{j} = rem % O{j}", f"    rem = rem // O{j}"]
    for j in range(lead - 1, 0, -1):
        body += [f"    l{j} = rem % L{j}", f"    rem = rem // L{j}"]
    body.append("    l0 = rem" if lead else "    rem = rem * 0")
    is_max = pool.op == "max"
    body.append("    acc = tl.full([BLOCK], -float(\"inf\"), tl.float32)" if is_max
                else "    acc = tl.zeros([BLOCK], tl.float32)")
    if not is_max:
        body.append("    count = tl.zeros([BLOCK], tl.float32)")
    indent = "    "
    for j in range(d):
        body.append(f"{indent}for k{j} in tl.static_range({a['kernel'][j]}):")
        indent += "    "
        body.append(f"{indent}i{j} = o{j} * {a['stride'][j]} - {a['padding'][j]} + "
                    f"k{j} * {a['dilation'][j]}")
    inside = " & ".join(f"(i{j} >= 0) & (i{j} < S{j})" for j in range(d))
    body.append(f"{indent}valid = mask & {inside}")
    names = codegen.emit([src], {}, graph.nodes, lambda n: loads[n], lambda n: n in loads,
                         body, indent)
    x = names[src]
    if is_max:
        body.append(f"{indent}acc = tl.maximum(acc, tl.where(valid, {x}, -float(\"inf\")))")
        body.append("    pooled = acc")
        return body
    body.append(f"{indent}acc += tl.where(valid, {x}, 0.0)")
    if a.get("divisor"):
        body.append(f"    pooled = acc / {float(a['divisor'])!r}")
        return body
    if a["count_include_pad"]:
        padded = " & ".join(f"(i{j} < S{j} + {a['padding'][j]})" for j in range(d))
        body.append(f"{indent}count += tl.where(mask & {padded}, 1.0, 0.0)")
    else:
        body.append(f"{indent}count += tl.where(valid, 1.0, 0.0)")
    body.append("    pooled = acc / tl.maximum(count, 1.0)")
    return body


def _downstream(graph: Graph, node: Node) -> set[Node]:
    after: set[Node] = set()
    for n in graph.nodes:
        if any(a is node or a in after for a in n.inputs()):
            after.add(n)
    return after


def _ext_inputs(graph: Graph, roots: list[Node], stop) -> list[Node]:
    found: list[Node] = []
    seen: set[Node] = set()
    stack = list(roots)
    while stack:
        n = stack.pop()
        if n in seen or stop(n):
            continue
        seen.add(n)
        if is_external(n):
            found.append(n)
        else:
            stack.extend(n.inputs())
    return sorted(found, key=graph.nodes.index)


def _forward(graph: Graph, kernel: str, src: Node, pool: Node, out: Node, chain: list[Node],
             pro: list[Node], epi: list[Node], lead: int, d: int) -> list[str]:
    ops = Operands(graph)
    names = [ops.name(e) for e in pro + epi]
    lines = list(ops.lines)
    for k, name in enumerate(names):
        lines.append(f"a{k} = {name}")
    full = next((k for k, e in enumerate(pro) if e.shape == src.shape), None)
    if full is None:
        raise NotDerivable("no input has the pooled tensor's shape")
    lines.append(f"shape = a{full}.shape")
    a = pool.attrs
    for j in range(d):
        size = f"shape[{lead + j}]"
        span = f"{a['dilation'][j]} * ({a['kernel'][j]} - 1) + 1"
        num = f"{size} + 2 * {a['padding'][j]} - ({span})"
        if a["ceil_mode"]:
            lines.append(f"o{j} = -(-({num}) // {a['stride'][j]}) + 1")
            lines.append(f"o{j} -= 1 if (o{j} - 1) * {a['stride'][j]} >= {size} + "
                         f"{a['padding'][j]} else 0")
        else:
            lines.append(f"o{j} = ({num}) // {a['stride'][j]} + 1")
    outs = ", ".join([f"shape[{j}]" for j in range(lead)] + [f"o{j}" for j in range(d)])
    lines.append(f"out_shape = ({outs},)")
    lines.append(f"y = torch.empty(out_shape, dtype={out.dtype}, device=a0.device)")
    call = [f"a{k}" for k in range(len(names))] + ["y", "y.numel()"]
    call += [f"shape[{j}]" for j in range(1, lead)]
    call += [f"shape[{lead + j}]" for j in range(d)] + [f"o{j}" for j in range(d)]
    for k in range(len(pro)):
        call += [f"a{k}.expand(shape).stride({j})" for j in range(lead + d)]
    for k in range(len(epi)):
        call += [f"a{len(pro) + k}.expand(out_shape).stride({j})" for j in range(lead + d)]
    lines += ["grid = (triton.cdiv(y.numel(), BLOCK_SIZE),)",
              f"{kernel}[grid]({', '.join(call)}, BLOCK=BLOCK_SIZE, num_warps=NUM_WARPS)"]
    lines += replay_chain("y", out, chain, ops)
    lines.append(f"return {chain[-1].name if chain else 'y'}")
    return lines
