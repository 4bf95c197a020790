"""The scan family: a cumulative sum or product along one dimension, with any
element-wise prologue and epilogue. The tensor is viewed as (OUTER, R, INNER); a program
owns one outer index and BLOCK_INNER inner ones and walks R in BLOCK_R chunks, carrying the
running total from chunk to chunk (tl.cumsum / tl.cumprod within a chunk)."""

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
from evotui.seed.indexing import OperandIndex, operand_index

TUNABLES = [Tunable("BLOCK_R", 256, [32, 64, 128, 256, 512, 1024]),
            Tunable("BLOCK_INNER", 16, [1, 2, 4, 8, 16, 32]),
            Tunable("NUM_WARPS", 4, [1, 2, 4, 8])]


def fits(graph: Graph) -> bool:
    kinds = {n.kind for n in graph.nodes}
    return "scan" in kinds and kinds <= {"input", "param", "ew", "view", "scan", "torch"}


def derive(graph: Graph, kernel: str) -> Parts:
    scans = [n for n in graph.nodes if n.kind == "scan"]
    if len(scans) > 1:
        raise NotDerivable(f"{len(scans)} scans: no template for more than one")
    scan = scans[0]
    shape = scan.shape
    rank = len(shape)
    dim = scan.attrs["dim"]
    bases, chains = peel_output_views(graph)
    if len(bases) != 1:
        raise NotDerivable("a scan with several outputs: no template")
    out = bases[0]
    check_computed(out)
    if out.shape != shape:
        raise NotDerivable("an output of another shape than the scanned tensor: no template")
    for n in graph.nodes:
        if n.kind == "view" and not is_external(n) and n not in chains[0]:
            raise NotDerivable("a view in the middle of the computation: no template")
    exts = sorted({a for n in graph.nodes if n.kind in ("ew", "scan") for a in n.inputs()
                   if is_external(a)}, key=graph.nodes.index)
    groups = [list(range(0, dim)), [dim], list(range(dim + 1, rank))]
    # an operand flipped along the scanned dimension is its source read back to front
    sources = [_flipped_source(e, dim) or e for e in exts]
    loads, ptrs, strides, indices = {}, [], [], []
    for k, (e, src) in enumerate(zip(exts, sources, strict=True)):
        if len(src.shape) > rank:
            raise NotDerivable("an operand of higher rank than the scanned tensor")
        index = operand_index(k, src, shape, groups, _flat(src is not e))
        indices.append(index)
        ptrs.append(f"in{k}_ptr")
        strides += index.params
        loads[e] = f"tl.load(in{k}_ptr + {index.offset}, mask=mask, other=0.0).to(tl.float32)"
    chain = chains[0]
    mirrored = bool(chain) and _flipped_source(chain[0], dim) is out
    if mirrored:
        chain = chain[1:]
    body: list[str] = []
    names = codegen.emit([scan.args[0]], {}, graph.nodes, lambda n: loads[n], is_external, body,
                         "        ")
    x = names[scan.args[0]]
    if scan.op == "sum":
        body += [f"        part = tl.cumsum(tl.where(mask, {x}, 0.0), axis=0) + carry",
                 "        carry = carry + tl.sum(tl.where(mask, "
                 f"{x}, 0.0), axis=0)[None, :]"]
    else:
        body += [f"        part = tl.cumprod(tl.where(mask, {x}, 1.0), axis=0) * carry",
                 "        carry = carry * tl.reduce(tl.where(mask, "
                 f"{x}, 1.0), 0, _times)[None, :]"]
    names2 = codegen.emit([out], {scan: "part", **{k: v for k, v in names.items()}},
                          graph.nodes, lambda n: loads[n], is_external, body, "        ",
                          prefix="u")
    at = _flat(mirrored)[1]
    body.append(f"        tl.store(out_ptr + pid_o * R * INNER + {at} * INNER + "
                f"offs_i[None, :], {names2[out]}.to(out_ptr.dtype.element_ty), mask=mask)")
    init = "0.0" if scan.op == "sum" else "1.0"
    args = ", ".join(ptrs + ["out_ptr", "R", "INNER"] + strides)
    kernel_src = template("scan.py.tmpl").substitute(kernel=kernel, args=args, init=init,
                                                     body="\n".join(body))
    helpers = ["@triton.jit\ndef _times(a, b):\n    return a * b\n"] if scan.op == "prod" else []
    fwd = _forward(graph, kernel, sources, indices, out, chains[0][:1] if mirrored else [],
                   chain, shape, dim)
    order = (",\nread or written back to front where the reference flips it," if (
        mirrored or sources != exts) else "")
    doc = (f"Derived from the reference: a cumulative {scan.op} along dimension {dim}{order} with "
           "the\nelement-wise ops around it fused; R walked in BLOCK_R chunks with a running "
           "carry,\nin fp32.\nKnobs: BLOCK_R, BLOCK_INNER, NUM_WARPS.")
    return Parts(doc=doc, kernels=helpers + [kernel_src], tunables=list(TUNABLES), forward=fwd)


def _forward(graph: Graph, kernel: str, exts: list[Node], indices: list[OperandIndex], out: Node,
             flip: list[Node], chain: list[Node], shape: tuple[int, ...], dim: int) -> list[str]:
    ops = Operands(graph)
    names = [ops.name(e) for e in exts]
    lines = list(ops.lines)
    for k, name in enumerate(names):
        lines.append(f"a{k} = {name}.contiguous()")
    full = next((k for k, e in enumerate(exts) if e.shape == shape), None)
    if full is None:
        raise NotDerivable("no input has the scanned tensor's full shape")
    lines += [f"shape = a{full}.shape", f"outer = math.prod(shape[:{dim}])",
              f"r = shape[{dim}]", f"inner = math.prod(shape[{dim + 1}:])",
              f"y = torch.empty(shape, dtype={out.dtype}, device=a0.device)"]
    call = [f"a{k}" for k in range(len(exts))] + ["y", "r", "inner"]
    for index in indices:
        call += index.values
    lines += ["block_i = min(BLOCK_INNER, triton.next_power_of_2(inner))",
              "block_r = min(BLOCK_R, triton.next_power_of_2(r))",
              "grid = (outer, triton.cdiv(inner, block_i))",
              f"{kernel}[grid]({', '.join(call)}, BLOCK_R=block_r, BLOCK_I=block_i, "
              "num_warps=NUM_WARPS)"]
    lines += replay_chain("y", flip[0] if flip else out, chain, ops)
    lines.append(f"return {chain[-1].name if chain else 'y'}")
    return lines


def _flat(mirrored: bool) -> list[str]:
    r = "(R - 1 - offs_r[:, None])" if mirrored else "offs_r[:, None]"
    return ["pid_o", r, "offs_i[None, :]"]


def _flipped_source(node: Node, dim: int) -> Node | None:
    """What ``node`` flips along exactly ``dim`` (None: it is no such flip)."""
    if node.kind == "view" and node.op == "flip" and node.attrs["view_args"][0] == [dim]:
        return node.args[0]
    return None
