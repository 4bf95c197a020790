"""The convolution family: one convolution (1-D, 2-D or 3-D; strided, padded, dilated,
grouped or depthwise; plain or transposed) as an implicit matrix product, with any
element-wise epilogue (its bias, an activation, a scale, a residual) fused on the fp32
accumulator. Rows are output positions (batch × space), columns a group's output
channels, and the reduction runs over the group's input channels × the kernel's taps,
gathered from the input with masks (no im2col buffer). A transposed convolution gathers
too: an output position takes the input positions that land on it. fp32 operands use
IEEE products, or three TF32 ones where the search sets TF32X3 (``precision.DotPrecision``)."""

from __future__ import annotations

from typing import Any

import evotui.seed.codegen as codegen
from evotui.seed.common import (
    Operands,
    Parts,
    Tunable,
    is_external,
    prod,
    product_with_epilogue,
    replay_chain,
    template,
)
from evotui.seed.graph import Graph, Node, NotDerivable
from evotui.seed.precision import DotPrecision

TUNABLES = [Tunable("BLOCK_M", 64, [16, 32, 64, 128]),
            Tunable("BLOCK_N", 32, [16, 32, 64, 128]),
            Tunable("BLOCK_K", 32, [16, 32, 64]),
            Tunable("NUM_WARPS", 4, [2, 4, 8]),
            Tunable("NUM_STAGES", 2, [1, 2, 3, 4])]


def fits(graph: Graph) -> bool:
    kinds = {n.kind for n in graph.nodes}
    return "conv" in kinds and kinds <= {"input", "param", "ew", "view", "conv", "torch"}


def derive(graph: Graph, kernel: str) -> Parts:
    found = product_with_epilogue(graph, "conv", "a convolution")
    conv, out, chain, epilogue, exts = (found.core, found.out, found.chain, found.epilogue,
                                        found.exts)
    x, w = conv.args
    if out.dtype != conv.dtype:
        raise NotDerivable("an epilogue that changes the convolution's dtype: no template")

    d = len(conv.shape) - 2
    loads, ptrs, strides = {}, [], []
    for k, e in enumerate(exts):
        ptrs.append(f"e{k}_ptr")
        s = [f"se{k}_{j}" for j in range(d + 2)]
        strides += s
        where = " + ".join([f"nb[:, None] * {s[0]}", f"co[None, :] * {s[1]}"] +
                           [f"o{j}[:, None] * {s[j + 2]}" for j in range(d)])
        loads[e] = f"tl.load(e{k}_ptr + {where}, mask=c_mask, other=0.0).to(tl.float32)"
    body: list[str] = []
    names = codegen.emit([out], {conv: "acc"}, graph.nodes, lambda n: loads[n], is_external,
                         body, "    ")
    y_off = " + ".join(["nb[:, None] * sy_n", "co[None, :] * sy_c"] +
                       [f"o{j}[:, None] * sy_{j}" for j in range(d)])
    body.append(f"    tl.store(y_ptr + {y_off}, {names[out]}.to(y_ptr.dtype.element_ty), "
                "mask=c_mask)")
    sizes = [f"S{j}" for j in range(d)] + [f"O{j}" for j in range(d)]
    layout = (["sx_n", "sx_c"] + [f"sx_{j}" for j in range(d)] + ["sw_0", "sw_1"] +
              [f"sw_{j + 2}" for j in range(d)] + ["sy_n", "sy_c"] + [f"sy_{j}" for j in range(d)])
    args = ", ".join(["x_ptr", "w_ptr"] + ptrs + ["y_ptr", "M", "COG", "KTOT", "CIG"] + sizes +
                     layout + strides)
    precision = DotPrecision.of(x.dtype)
    kernel_src = template("conv.py.tmpl").substitute(
        kernel=kernel, args=args, precision=precision.dot, precision_param=precision.param,
        positions="\n".join(_positions(d)),
        taps="\n".join(_taps(conv, d)), epilogue="\n".join(body))
    kind = "transposed convolution" if conv.attrs["transposed"] else "convolution"
    what = f"a {d}-D {kind} {'x'.join(map(str, w.shape[2:]))}"
    doc = (f"Derived from the reference: {what} as an implicit matrix product"
           + (" with its epilogue (" + ", ".join(dict.fromkeys(n.op for n in epilogue)) + ")"
              if epilogue else "")
           + " fused,\nthe input gathered per tap with masks, an fp32 accumulator.\n"
           "Knobs: BLOCK_M, BLOCK_N, BLOCK_K, NUM_WARPS, NUM_STAGES"
           + (", TF32X3 (fp32 products as three TF32 ones)" if precision.tunables else "") + ".")
    fwd = _forward(graph, kernel, conv, exts, out, chain, d, precision.launch)
    return Parts(doc=doc, kernels=[kernel_src], tunables=[*TUNABLES, *precision.tunables],
                 forward=fwd)


def _positions(d: int) -> list[str]:
    """Each row's output position: batch index ``nb`` and spatial ``o0..``."""
    lines = ["    rem = offs_m.to(tl.int64)"]
    for j in range(d - 1, -1, -1):
        lines += [f"    o{j} = rem % O{j}", f"    rem = rem // O{j}"]
    return lines + ["    nb = rem"]


def _taps(conv: Node, d: int) -> list[str]:
    """Each reduction index's input channel ``ci`` and taps ``t0..``, the input positions
    they read for each row, and the offsets into the input and the weight."""
    a, kernel = conv.attrs, conv.args[1].shape[2:]
    lines = ["        r = offs_k"]
    for j in range(d - 1, -1, -1):
        lines += [f"        t{j} = r % {kernel[j]}", f"        r = r // {kernel[j]}"]
    lines.append("        ci = r")
    inside = []
    for j in range(d):
        stride, pad, dil = a["stride"][j], a["padding"][j], a["dilation"][j]
        if not a["transposed"]:
            lines.append(f"        i{j} = o{j}[:, None] * {stride} - {pad} + t{j}[None, :] * {dil}")
            inside.append(f"(i{j} >= 0) & (i{j} < S{j})")
            continue
        # output o takes input i where i * stride - pad + t * dil == o
        lines.append(f"        n{j} = o{j}[:, None] + {pad} - t{j}[None, :] * {dil}")
        lines.append(f"        i{j} = n{j} // {stride}")
        exact = f" & (n{j} % {stride} == 0)" if stride != 1 else ""
        inside.append(f"(n{j} >= 0){exact} & (i{j} < S{j})")
    lines.append(f"        inside = {' & '.join(inside)}")
    x_off = " + ".join(["nb[:, None] * sx_n", "(g * CIG + ci)[None, :] * sx_c"] +
                       [f"i{j} * sx_{j}" for j in range(d)])
    taps = [f"t{j}[:, None] * sw_{j + 2}" for j in range(d)]
    if a["transposed"]:  # weight (in channels, out channels per group, taps...)
        w_off = ["(g * CIG + ci)[:, None] * sw_0", "offs_n[None, :] * sw_1"]
    else:  # weight (out channels, in channels per group, taps...)
        w_off = ["co[None, :] * sw_0", "ci[:, None] * sw_1"]
    lines += [f"        x_off = {x_off}", f"        w_off = {' + '.join(w_off + taps)}"]
    return lines


def _forward(graph: Graph, kernel: str, conv: Node, exts: list[Node], out: Node,
             chain: list[Node], d: int, precision: str) -> list[str]:
    ops = Operands(graph)
    x, w = (ops.name(v) for v in conv.args)
    names = [ops.name(e) for e in exts]
    a, taps = conv.attrs, conv.args[1].shape[2:]
    lines = list(ops.lines) + [f"x = {x}", f"w = {w}", f"groups = {_groups(a, w)}"]
    sizes = []
    for j in range(d):
        s, k = f"x.shape[{j + 2}]", taps[j]
        stride, pad, dil = a["stride"][j], a["padding"][j], a["dilation"][j]
        if a["transposed"]:
            extra = a["output_padding"][j]
            sizes.append(f"({s} - 1) * {stride} - {2 * pad} + {dil * (k - 1) + extra + 1}")
        else:
            sizes.append(f"({s} + {2 * pad} - {dil * (k - 1) + 1}) // {stride} + 1")
    cout = "w.shape[1] * groups" if a["transposed"] else "w.shape[0]"
    lines += [f"cout = {cout}",
              f"y = torch.empty((x.shape[0], cout, {', '.join(sizes)}), dtype=x.dtype, "
              "device=x.device)",
              "cig = x.shape[1] // groups", "cog = cout // groups",
              "m = y.numel() // cout", f"ktot = cig * {prod(taps)}"]
    call = ["x", "w"]
    strides: list[str] = []
    for k, name in enumerate(names):
        lines.append(f"e{k} = {name}.expand(y.shape)")
        call.append(f"e{k}")
        strides += [f"e{k}.stride({j})" for j in range(d + 2)]
    call += ["y", "m", "cog", "ktot", "cig"]
    call += [f"x.shape[{j + 2}]" for j in range(d)] + [f"y.shape[{j + 2}]" for j in range(d)]
    for t in ("x", "w", "y"):
        call += [f"{t}.stride({j})" for j in range(d + 2)]
    call += strides
    lines += ["grid = (triton.cdiv(m, BLOCK_M), triton.cdiv(cog, BLOCK_N), groups)",
              f"{kernel}[grid]({', '.join(call)}, BM=BLOCK_M, BN=BLOCK_N, BK=BLOCK_K"
              f"{precision}, num_warps=NUM_WARPS, num_stages=NUM_STAGES)"]
    lines += replay_chain("y", out, chain, ops)
    lines.append(f"return {chain[-1].name if chain else 'y'}")
    return lines


def _groups(a: dict[str, Any], w: str) -> str:
    """The group count as the candidate computes it: the traced one is the count at the
    traced shape, and a depthwise convolution's (groups = channels) grows with the task's.
    A convolution's weight holds its input channels per group; a transposed one's does not,
    so its count is read from the module that owns the weight."""
    if not a["transposed"]:
        return "x.shape[1] // w.shape[1]"
    if a["groups"] != 1 and w.startswith("self.") and w.endswith(".weight"):
        return f"{w[:-len('.weight')]}.groups"
    return str(a["groups"])
