"""The matrix-product family: one (batched) matrix product of inputs or parameters (any
strides: transposes are views), then any element-wise epilogue (bias, scale, activation,
residual) fused on the fp32 accumulator. Tiled with grouped program order; fp32 operands
use IEEE products, or three TF32 ones where the search sets TF32X3 (``precision.DotPrecision``).

Where the output's tiles are too few to fill the GPU (a long K: 256x256 over half a million),
K is split too (``MIN_PROGRAMS``): each program writes the product of its piece of K, and a
second kernel sums the pieces and applies the epilogue."""

from __future__ import annotations

import evotui.seed.codegen as codegen
from evotui.seed.common import (
    Operands,
    Parts,
    Tunable,
    is_external,
    product_with_epilogue,
    replay_chain,
    template,
)
from evotui.seed.graph import Graph, Node, NotDerivable
from evotui.seed.precision import DotPrecision

TUNABLES = [Tunable("BLOCK_M", 64, [16, 32, 64, 128, 256]),
            Tunable("BLOCK_N", 64, [16, 32, 64, 128, 256]),
            Tunable("BLOCK_K", 32, [16, 32, 64, 128]),
            Tunable("GROUP_M", 8, [1, 4, 8, 16]),
            Tunable("NUM_WARPS", 4, [2, 4, 8]),
            Tunable("NUM_STAGES", 2, [1, 2, 3, 4, 5]),
            Tunable("MIN_PROGRAMS", 512, [1, 128, 256, 512, 1024, 2048])]  # 1: K never split


def fits(graph: Graph) -> bool:
    kinds = {n.kind for n in graph.nodes}
    return "mm" in kinds and kinds <= {"input", "param", "ew", "view", "mm", "torch"}


def derive(graph: Graph, kernel: str) -> Parts:
    found = product_with_epilogue(graph, "mm", "a matrix product")
    mm, out, chain, epilogue, exts = (found.core, found.out, found.chain, found.epilogue,
                                      found.exts)
    a, b = mm.args

    loads = {}
    ptrs, strides = [], []
    for k, e in enumerate(exts):
        ptrs.append(f"e{k}_ptr")
        s = [f"se{k}_b", f"se{k}_m", f"se{k}_n"]
        strides += s
        loads[e] = (f"tl.load(e{k}_ptr + pid_b * {s[0]} + offs_m[:, None] * {s[1]} + "
                    f"offs_n[None, :] * {s[2]}, mask=c_mask, other=0.0).to(tl.float32)")
    body: list[str] = []
    names = codegen.emit([out], {mm: "acc"}, graph.nodes, lambda n: loads[n], is_external, body,
                         "    ")
    body.append(f"    tl.store(c_ptrs, {names[out]}.to(c_ptr.dtype.element_ty), mask=c_mask)")
    precision = DotPrecision.of(a.dtype)
    args = ", ".join(["a_ptr", "b_ptr"] + ptrs + ["c_ptr", "M", "N", "K", "sa_b", "sa_m", "sa_k",
                                                   "sb_b", "sb_k", "sb_n", "sc_b", "sc_m",
                                                   "sc_n"] + strides)
    kernel_src = template("gemm.py.tmpl").substitute(
        kernel=kernel, args=args, precision=precision.dot, precision_param=precision.param,
        epilogue="\n".join(body))
    combine_args = ", ".join(ptrs + ["c_ptr", "M", "N", "sc_b", "sc_m", "sc_n"] + strides)
    split_src = template("gemm_split.py.tmpl").substitute(
        kernel=kernel, args=combine_args, precision=precision.dot,
        precision_param=precision.param, epilogue="\n".join(body))
    fwd = _forward(graph, kernel, mm, exts, out, chain, precision.launch)
    doc = ("Derived from the reference: a tiled matrix product"
           + (" with its epilogue (" + ", ".join(dict.fromkeys(n.op for n in epilogue)) + ")"
              if epilogue else "")
           + " fused,\nan fp32 accumulator, grouped (GROUP_M) program order.\n"
           "With fewer tiles than MIN_PROGRAMS, K is split between programs too and a second\n"
           "kernel sums the pieces.\n"
           "Knobs: BLOCK_M, BLOCK_N, BLOCK_K, GROUP_M, NUM_WARPS, NUM_STAGES, MIN_PROGRAMS"
           + (", TF32X3 (fp32 products as three TF32 ones)" if precision.tunables else "") + ".")
    return Parts(doc=doc, kernels=[kernel_src, split_src],
                 tunables=[*TUNABLES, *precision.tunables],
                 forward=fwd)


def _forward(graph: Graph, kernel: str, mm: Node, exts: list[Node], out: Node,
             chain: list[Node], precision: str) -> list[str]:
    ops = Operands(graph)
    a, b = (ops.name(x) for x in mm.args)
    names = [ops.name(e) for e in exts]
    lines = list(ops.lines)
    batched = len(mm.shape) == 3
    lines.append(f"a = {a}")
    lines.append(f"b = {b}")
    if batched:
        lines += ["nb, m, k = a.shape", "n = b.shape[2]",
                  "sa = (a.stride(0), a.stride(1), a.stride(2))",
                  "sb = (b.stride(0), b.stride(1), b.stride(2))",
                  "c = torch.empty((nb, m, n), dtype=a.dtype, device=a.device)",
                  "sc = (c.stride(0), c.stride(1), c.stride(2))"]
    else:
        lines += ["m, k = a.shape", "n = b.shape[1]", "nb = 1",
                  "sa = (0, a.stride(0), a.stride(1))", "sb = (0, b.stride(0), b.stride(1))",
                  "c = torch.empty((m, n), dtype=a.dtype, device=a.device)",
                  "sc = (0, c.stride(0), c.stride(1))"]
    call = ["a", "b"]
    strides = []
    for k, name in enumerate(names):
        lines.append(f"e{k} = {name}.expand(c.shape)")
        call.append(f"e{k}")
        if batched:
            strides += [f"e{k}.stride(0)", f"e{k}.stride(1)", f"e{k}.stride(2)"]
        else:
            strides += ["0", f"e{k}.stride(0)", f"e{k}.stride(1)"]
    tiles = ["c", "m", "n"]
    call += [*tiles, "k", "*sa", "*sb", "*sc"] + strides
    config = (f"BM=BLOCK_M, BN=BLOCK_N, BK=BLOCK_K, GM=GROUP_M{precision}, num_warps=NUM_WARPS, "
              "num_stages=NUM_STAGES")
    combine = ["work", *call[2:2 + len(names)], *tiles, "*sc", *strides, "pieces", "nb"]
    lines += ["grid = (triton.cdiv(m, BLOCK_M) * triton.cdiv(n, BLOCK_N), nb)",
              # too few tiles for the GPU: K in pieces too, then the pieces summed
              "pieces = min(triton.cdiv(k, BLOCK_K), max(1, MIN_PROGRAMS // (grid[0] * nb)))",
              "if pieces > 1:",
              "    k_chunk = triton.cdiv(triton.cdiv(k, pieces), BLOCK_K) * BLOCK_K",
              "    pieces = triton.cdiv(k, k_chunk)",
              "    work = torch.empty((pieces, nb, m, n), dtype=torch.float32, device=a.device)",
              f"    {kernel}_partial[grid + (pieces,)](a, b, work, m, n, k, k_chunk, nb, *sa, *sb, "
              f"{config})",
              f"    {kernel}_combine[grid]({', '.join(combine)}, BM=BLOCK_M, BN=BLOCK_N, "
              "num_warps=NUM_WARPS)",
              "else:",
              f"    {kernel}[grid]({', '.join(call)}, {config})"]
    lines += replay_chain("c", out, chain, ops)
    lines.append(f"return {chain[-1].name if chain else 'c'}")
    if out.dtype != mm.dtype:
        raise NotDerivable("an epilogue that changes the product's dtype: no template")
    return lines
