"""The reduction family: reductions over the same consecutive dimensions of one shape
(sum, mean, max, min, argmax, argmin; softmax, log-softmax, norms, variance after
tracing), with any element-wise prologue and epilogue. The tensor is viewed as
(OUTER, R, INNER); a program owns one outer index and BLOCK_INNER inner ones, and walks R
in BLOCK_R chunks once per reduction, then once more to write full-size outputs.

Where that makes too few programs to fill the GPU (a loss reduced to one value: OUTER and
INNER are 1) and the reductions can be split (sums, maxima and minima that do not read one
another, no full-size output), R is also split between programs: each writes its partial
results, and a second kernel combines them and applies the epilogue (``MIN_PROGRAMS``)."""

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

SPLIT_TUNABLE = Tunable("MIN_PROGRAMS", 512, [1, 64, 128, 256, 512, 1024, 2048])  # 1: no split
TUNABLES = [Tunable("BLOCK_R", 1024, [64, 128, 256, 512, 1024, 2048, 4096]),
            Tunable("BLOCK_INNER", 16, [1, 2, 4, 8, 16, 32, 64]),
            Tunable("NUM_WARPS", 4, [1, 2, 4, 8, 16]),
            Tunable("NUM_STAGES", 1, [1, 2, 3])]
_FLAT = ["pid_o", "offs_r[:, None]", "offs_i[None, :]"]
_INIT = {"sum": "0.0", "max": '-float("inf")', "min": 'float("inf")',
         "argmax": '-float("inf")', "argmin": 'float("inf")'}


def fits(graph: Graph) -> bool:
    kinds = {n.kind for n in graph.nodes}
    return "reduce" in kinds and kinds <= {"input", "param", "ew", "view", "reduce", "torch"}


def derive(graph: Graph, kernel: str) -> Parts:
    reds = [n for n in graph.nodes if n.kind == "reduce"]
    shape = reds[0].args[0].shape
    dims = reds[0].attrs["dims"]
    for r in reds:
        if r.args[0].shape != shape or r.attrs["dims"] != dims:
            raise NotDerivable("reductions over different shapes or dimensions: no template")
    if dims != list(range(dims[0], dims[-1] + 1)):
        raise NotDerivable(f"a reduction over dimensions {dims} that are not consecutive: "
                           "no template")
    d0, d1 = dims[0], dims[-1]
    rank = len(shape)
    groups = [list(range(0, d0)), list(range(d0, d1 + 1)), list(range(d1 + 1, rank))]
    bases, chains = peel_output_views(graph)
    row = _row_nodes(graph)
    for n in graph.nodes:
        if n.kind == "view" and not is_external(n) and n not in sum(chains, []):
            raise NotDerivable("a view in the middle of the computation: no template")
        if n.kind == "ew" and n not in row:
            for a in n.inputs():
                if a in row and len(a.shape) not in (rank, 0):
                    raise NotDerivable("a reduction without keepdim broadcast back: no template")
        if n.kind == "ew" and n in row and any(is_external(a) for a in n.inputs()):
            raise NotDerivable("an input combined with a reduced value: no template")
    for b in bases:
        check_computed(b)
        if b not in row and b.shape != shape:
            raise NotDerivable("an output of another shape than the reduced tensor: no template")

    exts = sorted({a for n in graph.nodes if n.kind in ("ew", "reduce") for a in n.inputs()
                   if is_external(a)}, key=graph.nodes.index)
    for e in exts:
        if len(e.shape) > rank:
            raise NotDerivable("an operand of higher rank than the reduced tensor")
    loads = {}
    ptrs, strides = [], []
    indices = [operand_index(k, e, shape, groups, _FLAT) for k, e in enumerate(exts)]
    for k, (e, index) in enumerate(zip(exts, indices, strict=True)):
        ptrs.append(f"in{k}_ptr")
        strides += index.params
        loads[e] = (f"tl.load(in{k}_ptr + {index.offset}, mask=mask, other=0.0)"
                    ".to(tl.float32)")
    body: list[str] = []
    given: dict[Node, str] = {}
    order = graph.nodes
    stop = is_external
    for r in reds:
        body += _reduce_loop(r, given, order, loads, stop)
        given[r] = f"r{r.name[1:]}"
        _rows_ready(graph, row, given, body)
    outs = [f"out{k}_ptr" for k in range(len(bases))]
    full = [b for b in bases if b not in row]
    if full:
        body.append("    for r0 in tl.range(0, R, BLOCK_R, num_stages=STAGES):")
        body.append("        offs_r = r0 + tl.arange(0, BLOCK_R)")
        body.append("        mask = (offs_r[:, None] < R) & mask_i[None, :]")
        names = codegen.emit(full, given, order, lambda n: loads[n], stop, body, "        ")
        for k, b in enumerate(bases):
            if b in full:
                body.append(f"        tl.store(out{k}_ptr + pid_o * R * INNER + offs_r[:, None] * "
                            f"INNER + offs_i[None, :], {names[b]}.to(out{k}_ptr.dtype.element_ty),"
                            " mask=mask)")
    for k, b in enumerate(bases):
        if b in row:
            if b not in given:
                raise NotDerivable("a reduced output the template cannot compute")
            body.append(f"    tl.store(out{k}_ptr + pid_o * INNER + offs_i[None, :], "
                        f"{given[b]}.to(out{k}_ptr.dtype.element_ty), mask=mask_i[None, :])")
    args = ", ".join(ptrs + outs + ["R", "INNER"] + strides)
    kernel_src = template("reduction.py.tmpl").substitute(kernel=kernel, args=args,
                                                          body="\n".join(body))
    split = not full and _splittable(reds)
    kernels, tunables = [kernel_src], list(TUNABLES)
    if split:
        kernels += _split_kernels(graph, kernel, reds, row, bases, loads, ptrs, strides)
        tunables.append(SPLIT_TUNABLE)
    return Parts(doc=_doc(reds, dims, split), kernels=kernels, tunables=tunables,
                 forward=_forward(graph, kernel, exts, indices, bases, chains, row, shape,
                                  dims, split))


def _splittable(reds: list[Node]) -> bool:
    """Sums, maxima and minima whose inputs read no other reduction: partial results over
    pieces of R combine into the whole one."""
    if any(r.op not in ("sum", "max", "min") for r in reds):
        return False
    for r in reds:
        seen, todo = set(), list(r.inputs())
        while todo:
            n = todo.pop()
            if n in seen:
                continue
            if n.kind == "reduce":
                return False
            seen.add(n)
            todo += n.inputs()
    return True


def _split_kernels(graph: Graph, kernel: str, reds: list[Node], row: set[Node],
                   bases: list[Node], loads: dict[Node, str], ptrs: list[str],
                   strides: list[str]) -> list[str]:
    """The partial kernel (one piece of R per program: ``tl.program_id(2)``) and the kernel
    that combines the pieces, applies the epilogue and stores the outputs."""
    header = ["    pid_o = tl.program_id(0).to(tl.int64)",
              "    offs_i = tl.program_id(1) * BLOCK_I + tl.arange(0, BLOCK_I)",
              "    mask_i = offs_i < INNER"]
    work = [f"work{k}_ptr" for k in range(len(reds))]
    partial = header + ["    r_lo = tl.program_id(2).to(tl.int64) * R_CHUNK",
                        "    r_hi = tl.minimum(R, r_lo + R_CHUNK)"]
    given: dict[Node, str] = {}
    for k, r in enumerate(reds):
        partial += _reduce_loop(r, given, graph.nodes, loads, is_external, "r_lo", "r_hi")
        partial.append(f"    tl.store(work{k}_ptr + (pid_o * SPLIT + tl.program_id(2)) * INNER"
                       f" + offs_i[None, :], r{r.name[1:]}, mask=mask_i[None, :])")
    combine = header + ["    offs_s = tl.arange(0, BLOCK_S)",
                        "    mask_s = (offs_s[:, None] < SPLIT) & mask_i[None, :]"]
    given = {}
    for k, r in enumerate(reds):
        v = r.name[1:]
        combine += [f"    part{v} = tl.load(work{k}_ptr + (pid_o * SPLIT + offs_s[:, None]) * "
                    f"INNER + offs_i[None, :], mask=mask_s, other={_INIT[r.op]})",
                    f"    r{v} = tl.{r.op}(part{v}, axis=0)[None, :]"]
        given[r] = f"r{v}"
    _rows_ready(graph, row, given, combine)
    outs = [f"out{k}_ptr" for k in range(len(bases))]
    for k, b in enumerate(bases):
        if b not in given:
            raise NotDerivable("a reduced output the template cannot compute")
        combine.append(f"    tl.store(out{k}_ptr + pid_o * INNER + offs_i[None, :], "
                       f"{given[b]}.to(out{k}_ptr.dtype.element_ty), mask=mask_i[None, :])")
    partial_args = ", ".join(ptrs + work + ["R", "INNER", "R_CHUNK", "SPLIT"] + strides)
    combine_args = ", ".join(work + outs + ["R", "INNER", "SPLIT"])
    return [f"@triton.jit\ndef {kernel}_partial({partial_args}, BLOCK_R: tl.constexpr, "
            "BLOCK_I: tl.constexpr, STAGES: tl.constexpr):\n" + "\n".join(partial) + "\n",
            f"@triton.jit\ndef {kernel}_combine({combine_args}, BLOCK_S: tl.constexpr, "
            "BLOCK_I: tl.constexpr):\n" + "\n".join(combine) + "\n"]


def _row_nodes(graph: Graph) -> set[Node]:
    row: set[Node] = set()
    for n in graph.nodes:
        if n.kind == "reduce":
            row.add(n)
        elif n.kind == "ew" and n.inputs() and all(a in row for a in n.inputs()):
            row.add(n)
    return row


def _rows_ready(graph: Graph, row: set[Node], given: dict[Node, str], body: list[str]) -> None:
    from evotui.seed.ops import expression, operand_text

    for n in graph.nodes:
        if n in row and n not in given and n.kind == "ew" and all(a in given for a in n.inputs()):
            var = f"r{n.name[1:]}"
            body.append(f"    {var} = {expression(n, [operand_text(a, given) for a in n.args])}")
            given[n] = var


def _reduce_loop(r: Node, given: dict[Node, str], order: list[Node], loads: dict[Node, str],
                 stop, lo: str = "0", hi: str = "R") -> list[str]:
    op, v = r.op, r.name[1:]
    lines = []
    if op in ("argmax", "argmin"):
        lines += [f"    best{v} = tl.full([1, BLOCK_I], {_INIT[op]}, tl.float32)",
                  f"    idx{v} = tl.zeros([1, BLOCK_I], tl.int64)"]
    else:
        lines.append(f"    acc{v} = tl.full([BLOCK_R, BLOCK_I], {_INIT[op]}, tl.float32)")
    lines += [f"    for r0 in tl.range({lo}, {hi}, BLOCK_R, num_stages=STAGES):",
              "        offs_r = r0 + tl.arange(0, BLOCK_R)",
              f"        mask = (offs_r[:, None] < {hi}) & mask_i[None, :]"]
    names = codegen.emit([r.args[0]], given, order, lambda n: loads[n], stop, lines, "        ")
    x = names[r.args[0]]
    if op == "sum":
        lines.append(f"        acc{v} += tl.where(mask, {x}, 0.0)")
        lines.append(f"    r{v} = tl.sum(acc{v}, axis=0)[None, :]")
    elif op in ("max", "min"):
        f = "tl.maximum" if op == "max" else "tl.minimum"
        lines.append(f"        acc{v} = {f}(acc{v}, tl.where(mask, {x}, {_INIT[op]}))")
        lines.append(f"    r{v} = tl.{op}(acc{v}, axis=0)[None, :]")
    else:
        pick, cmp = ("max", ">") if op == "argmax" else ("min", "<")
        lines += [f"        masked{v} = tl.where(mask, {x}, {_INIT[op]})",
                  f"        chunk{v} = tl.{pick}(masked{v}, axis=0)[None, :]",
                  f"        at{v} = (tl.arg{pick}(masked{v}, axis=0) + r0).to(tl.int64)[None, :]",
                  f"        better{v} = chunk{v} {cmp} best{v}",
                  f"        best{v} = tl.where(better{v}, chunk{v}, best{v})",
                  f"        idx{v} = tl.where(better{v}, at{v}, idx{v})",
                  f"    r{v} = idx{v}"]
    return lines


def _forward(graph: Graph, kernel: str, exts: list[Node], indices: list[OperandIndex],
             bases: list[Node], chains: list[list[Node]], row: set[Node],
             shape: tuple[int, ...], dims: list[int], split: bool) -> list[str]:
    ops = Operands(graph)
    lines: list[str] = []
    tensors = []
    for e in exts:
        name = ops.name(e)
        tensors.append((e, name))
    lines += ops.lines
    full_src = next((k for k, (e, _) in enumerate(tensors) if e.shape == shape), None)
    for k, (_, name) in enumerate(tensors):
        lines.append(f"a{k} = {name}.contiguous()")
    if full_src is None:
        raise NotDerivable("no input has the reduced tensor's full shape")
    d0, d1 = dims[0], dims[-1]
    lines += [f"shape = a{full_src}.shape",
              f"outer = math.prod(shape[:{d0}])",
              f"r = math.prod(shape[{d0}:{d1 + 1}])",
              f"inner = math.prod(shape[{d1 + 1}:])"]
    call = [f"a{k}" for k in range(len(exts))]
    for k, b in enumerate(bases):
        out_shape = _out_shape(b, shape, dims, row)
        lines.append(f"y{k} = torch.empty({out_shape}, dtype={b.dtype}, device=a0.device)")
        call.append(f"y{k}")
    call += ["r", "inner"]
    for index in indices:
        call += index.values
    lines += ["block_i = min(BLOCK_INNER, triton.next_power_of_2(inner))",
              "block_r = min(BLOCK_R, triton.next_power_of_2(r))",
              "grid = (outer, triton.cdiv(inner, block_i))"]
    launch = (f"{kernel}[grid]({', '.join(call)}, BLOCK_R=block_r, BLOCK_I=block_i, "
              "STAGES=NUM_STAGES, num_warps=NUM_WARPS)")
    if not split:
        lines.append(launch)
    else:  # too few programs for the GPU: R in pieces too, then the pieces combined
        reds = [n for n in graph.nodes if n.kind == "reduce"]
        work = [f"work{k}" for k in range(len(reds))]
        ins, outs = call[:len(exts)], call[len(exts):len(exts) + len(bases)]
        lines += ["programs = outer * triton.cdiv(inner, block_i)",
                  "pieces = min(triton.cdiv(r, block_r), max(1, MIN_PROGRAMS // programs))",
                  "if pieces > 1:",
                  "    r_chunk = triton.cdiv(triton.cdiv(r, pieces), block_r) * block_r",
                  "    pieces = triton.cdiv(r, r_chunk)"]
        lines += [f"    {w} = torch.empty((outer, pieces, inner), dtype=torch.float32, "
                  "device=a0.device)" for w in work]
        lines += [f"    {kernel}_partial[grid + (pieces,)]("
                  f"{', '.join(ins + work + ['r', 'inner', 'r_chunk', 'pieces'] + call[len(exts) + len(bases) + 2:])}, "
                  "BLOCK_R=block_r, BLOCK_I=block_i, STAGES=NUM_STAGES, num_warps=NUM_WARPS)",
                  f"    {kernel}_combine[grid]({', '.join(work + outs + ['r', 'inner', 'pieces'])}, "
                  "BLOCK_S=triton.next_power_of_2(pieces), BLOCK_I=block_i)",
                  "else:",
                  f"    {launch}"]
    results = []
    for k, (b, chain) in enumerate(zip(bases, chains, strict=True)):
        lines.extend(replay_chain(f"y{k}", b, chain, ops))
        results.append(chain[-1].name if chain else f"y{k}")
    lines.append(f"return {', '.join(results)}")
    return lines


def _out_shape(b: Node, shape: tuple[int, ...], dims: list[int], row: set[Node]) -> str:
    rank = len(shape)
    if b not in row:
        return "shape"
    if len(b.shape) == rank:
        return "(" + ", ".join("1" if d in dims else f"shape[{d}]" for d in range(rank)) + ",)"
    if len(b.shape) == rank - len(dims):
        kept = [f"shape[{d}]" for d in range(rank) if d not in dims]
        return "(" + ", ".join(kept) + ("," if kept else "") + ")"
    raise NotDerivable("a reduced output of a rank the template does not know")


def _doc(reds: list[Node], dims: list[int], split: bool) -> str:
    what = ", ".join(r.op for r in reds)
    pieces = ("\nWith fewer than MIN_PROGRAMS programs, R is split between programs too and a\n"
              "second kernel combines their partial results." if split else "")
    return (f"Derived from the reference: {what} over dimensions {dims}, fused with the\n"
            "element-wise ops around them; the tensor is seen as (OUTER, R, INNER), one program\n"
            "per outer index and BLOCK_INNER inner ones, R walked in BLOCK_R chunks once per\n"
            f"reduction, in fp32.{pieces}\nKnobs: BLOCK_R, BLOCK_INNER, NUM_WARPS, NUM_STAGES"
            f"{', MIN_PROGRAMS' if split else ''}.")
