"""What every derived candidate shares: ``ModelNew.__init__`` copied from the reference
(so parameters are created as the reference creates them), the forward's operands (inputs,
parameters, views of them replayed with torch's view ops), and the file's layout."""

from __future__ import annotations

import inspect
import math
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from string import Template
from typing import Any

from evotui.seed.graph import Graph, Node, NotDerivable

TEMPLATES = Path(__file__).parent / "templates"
_MODULES_OK = {"torch", "nn", "F", "math", "triton", "tl"}


def template(name: str) -> Template:
    return Template((TEMPLATES / name).read_text())


@dataclass
class Tunable:
    name: str
    value: int
    choices: list[int]


@dataclass
class Parts:
    """The pieces of a candidate file, put together by ``assemble``."""

    doc: str
    kernels: list[str]
    tunables: list[Tunable]
    forward: list[str]  # lines of forward's body, without indentation
    helpers: list[str] = field(default_factory=list)


def init_source(model_cls: type) -> tuple[str, dict[str, Any]]:
    """``ModelNew.__init__``: the reference's own, with ``super(Model, self)`` made plain;
    and the task-file constants it reads (copied into the candidate)."""
    init = model_cls.__dict__.get("__init__")
    if init is None:
        return "def __init__(self, *args, **kwargs):\n    super().__init__()\n", {}
    try:
        src = textwrap.dedent(inspect.getsource(init))
    except (OSError, TypeError):
        raise NotDerivable("the source of Model.__init__ cannot be read") from None
    src = re.sub(r"super\(\s*Model\s*,\s*self\s*\)", "super()", src)
    consts: dict[str, Any] = {}
    for name, value in inspect.getclosurevars(init).globals.items():
        if name in _MODULES_OK or inspect.ismodule(value):
            if name not in _MODULES_OK:
                raise NotDerivable(f"Model.__init__ uses the module {name}: no template for it")
            continue
        if isinstance(value, int | float | str | bool | tuple) and not isinstance(value, type):
            consts[name] = value
        elif name == "Model":
            continue
        else:
            raise NotDerivable(f"Model.__init__ uses {name} from the task file; pass --seed FILE")
    return src, consts


def assemble(parts: Parts, init_src: str, consts: dict[str, Any], params: list[str],
             methods: str = "") -> str:
    tun_lines = [f"{t.name} = {t.value}" for t in parts.tunables]
    tun_decl = ",\n".join(f'    "{t.name}": {t.choices}' for t in parts.tunables)
    const_lines = [f"{k} = {v!r}" for k, v in consts.items()]
    body = "\n".join("        " + line if line else "" for line in parts.forward)
    forward = f"    def forward(self, {', '.join(params)}):\n{body}\n"
    if methods:
        forward += "\n" + textwrap.indent(methods, "    ")
    return template("candidate.py.tmpl").substitute(
        doc=parts.doc,
        tunables="\n".join(tun_lines) + "\nTUNABLES = {\n" + tun_decl + ",\n}\n",
        consts=("\n".join(const_lines) + "\n\n") if const_lines else "",
        kernels="\n\n".join(k.strip() + "\n" for k in parts.kernels),
        helpers=("\n\n" + "\n\n".join(h.strip() + "\n" for h in parts.helpers))
        if parts.helpers else "",
        init=textwrap.indent(init_src.rstrip() + "\n", "    "),
        forward=forward)


class Operands:
    """Python names, in the candidate's forward, for the graph's external values."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.names: dict[Node, str] = {}
        self.lines: list[str] = []

    def input_shapes(self) -> list[tuple[str, tuple[int, ...]]]:
        return [(self.graph.forward_params[n.attrs["index"]], n.shape) for n in self.graph.nodes
                if n.kind == "input" and n.attrs["index"] < len(self.graph.forward_params)]

    def input_with_shape(self, shape: tuple[int, ...]) -> str | None:
        """A forward argument of this traced shape (a reshape back to an input's shape)."""
        for n in self.graph.nodes:
            if n.kind == "input" and n.shape == shape and n.attrs["index"] < len(
                    self.graph.forward_params):
                return self.graph.forward_params[n.attrs["index"]]
        return None

    def name(self, node: Node) -> str:
        if node in self.names:
            return self.names[node]
        if node.kind == "input":
            if node.attrs["index"] >= len(self.graph.forward_params):
                raise NotDerivable("forward takes fewer arguments than get_inputs() returns")
            text = self.graph.forward_params[node.attrs["index"]]
        elif node.kind == "param":
            text = "self" + "".join(f"[{p}]" if p.isdigit() else f".{p}"
                                    for p in node.attrs["fqn"].split("."))
        elif node.kind == "torch":
            text = node.name
            self.lines.append(f"{text} = {torch_call(self, node)}")
        elif node.kind == "view":
            src = node.args[0]
            text = node.name
            self.lines.append(f"{text} = {view_call(self.name(src), src, node, self)}")
        else:
            raise NotDerivable(f"{node.kind} value {node.op} used where an input was expected")
        self.names[node] = text
        return text


def is_external(node: Node) -> bool:
    """An input, a parameter, views of one (replayed in forward), or what an op the task
    keeps in torch computes from them."""
    while node.kind == "view":
        node = node.args[0]
    if node.kind == "torch":
        return all(is_external(a) for a in node.inputs())
    return node.kind in ("input", "param")


def check_computed(base: Node) -> None:
    """An output must be computed by the kernel, not handed through."""
    if base.kind == "torch":
        raise NotDerivable(f"the output is what aten::{base.op} computes, kept in torch "
                           "(--allow-torch): nothing is left for a kernel")
    if base.kind in ("input", "param", "view"):
        raise NotDerivable("the model returns an input or a view of one unchanged")


def torch_call(ops: Operands, node: Node) -> str:
    """An op the task lets candidates keep in torch (``--allow-torch``), as a torch call."""
    a = node.attrs["call_args"]

    def text(v: Any) -> str:
        if isinstance(v, Node):
            return ops.name(v)
        if isinstance(v, list | tuple):
            return "[" + ", ".join(text(x) for x in v) + "]"
        return repr(v)

    if node.op == "convolution":
        x, w, b, stride, padding, dilation, transposed, output_padding, groups = a[:9]
        n = len(stride)
        if transposed:
            return (f"F.conv_transpose{n}d({text(x)}, {text(w)}, {text(b)}, {list(stride)}, "
                    f"{list(padding)}, {list(output_padding)}, {groups}, {list(dilation)})")
        return (f"F.conv{n}d({text(x)}, {text(w)}, {text(b)}, {list(stride)}, {list(padding)}, "
                f"{list(dilation)}, {groups})")
    if node.op in ("mm", "bmm", "addmm"):
        return f"torch.{node.op}({', '.join(text(v) for v in a)})"
    raise NotDerivable(f"aten::{node.op} kept in torch: no template calls it")


def view_call(src_name: str, src: Node, node: Node, ops: Operands | None = None) -> str:
    a = node.attrs.get("view_args", [])
    op = node.op
    if op == "raw":
        ref = node.attrs.get("ref")
        if ref is not None and ops is None:
            raise NotDerivable("a reshape back to an input's shape outside a forward")
        return node.attrs["expr"].format(x=src_name, ref=ops.name(ref) if ref is not None else "")
    if op in ("view", "_unsafe_view", "reshape"):
        inputs = ops.input_shapes() if ops is not None else []
        target = shape_expr(src_name, src.shape, tuple(a[0]), inputs)
        like = ops.input_with_shape(tuple(a[0])) if ops is not None else None
        if "-1" in target and like is not None:
            # a split keeps traced sizes; an input of that shape follows the real ones
            return f"{src_name}.reshape({like}.shape)"
        return f"{src_name}.reshape({target})"
    if op == "flip":
        return f"{src_name}.flip({list(a[0])})"
    if op == "permute":
        return f"{src_name}.permute({list(a[0])})"
    if op == "t":
        return f"{src_name}.t()"
    if op == "transpose":
        return f"{src_name}.transpose({a[0]}, {a[1]})"
    if op == "unsqueeze":
        return f"{src_name}.unsqueeze({a[0]})"
    if op == "squeeze":
        if not a:
            return f"{src_name}.squeeze()"
        dims = a[0] if isinstance(a[0], list | tuple) else [a[0]]
        out = src_name
        for d in sorted((d % len(src.shape) for d in dims), reverse=True):
            out = f"{out}.squeeze({d})"
        return out
    if op == "expand":
        sizes = list(a[0])
        off = len(sizes) - len(src.shape)
        mapped = []
        for j, s in enumerate(sizes):
            i = j - off
            if s == -1 or (i >= 0 and src.shape[i] == s):
                mapped.append("-1")
            else:
                raise NotDerivable("an expand to a size fixed at the traced shape: no template")
        return f"{src_name}.expand({', '.join(mapped)})"
    raise NotDerivable(f"view op {op}: no template for it")


def shape_expr(x: str, src: tuple[int, ...], dst: tuple[int, ...],
               inputs: list[tuple[str, tuple[int, ...]]] = ()) -> str:
    """A reshape target that follows the source's runtime sizes where dimensions merge or
    map one to one; split dimensions keep their traced sizes, one of them as -1."""
    out: list[str] = []
    i = j = 0
    minus = False
    while j < len(dst):
        if dst[j] == 1 and (i >= len(src) or src[i] != 1):
            out.append("1")
            j += 1
            continue
        if i < len(src) and src[i] == 1 and dst[j] != 1:
            i += 1
            continue
        if i >= len(src):
            raise NotDerivable("a reshape the seed generator cannot follow")
        if src[i] == dst[j]:
            out.append(f"{x}.shape[{i}]")
            i += 1
            j += 1
            continue
        if src[i] < dst[j]:
            k, p = i, 1
            while k < len(src) and p < dst[j]:
                p *= src[k]
                k += 1
            if p != dst[j]:
                raise NotDerivable("a reshape the seed generator cannot follow")
            out.append(f"math.prod({x}.shape[{i}:{k}])")
            i, j = k, j + 1
            continue
        k, q = j, 1
        while k < len(dst) and q < src[i]:
            q *= dst[k]
            k += 1
        if q != src[i]:
            raise NotDerivable("a reshape the seed generator cannot follow")
        same = next((name for name, shape in inputs if tuple(shape[j:k]) == dst[j:k]), None)
        for n, size in enumerate(dst[j:k]):
            if same is not None:  # an input with these sizes here: follow its real ones
                out.append(f"{same}.shape[{j + n}]")
            elif n == 0 and not minus:
                out.append("-1")
                minus = True
            else:
                out.append(str(size))
        i, j = i + 1, k
    while i < len(src) and src[i] == 1:
        i += 1
    if i != len(src):
        raise NotDerivable("a reshape the seed generator cannot follow")
    return "(" + ", ".join(out) + ("," if len(out) == 1 else "") + ")"


def peel_output_views(graph: Graph) -> tuple[list[Node], list[list[Node]]]:
    """Each output's computed base and the views applied to it (replayed after the kernel)."""
    bases, chains = [], []
    for out in graph.outputs:
        chain = []
        node = out
        while node.kind == "view" and not is_external(node):
            chain.append(node)
            node = node.args[0]
        bases.append(node)
        chains.append(list(reversed(chain)))
    return bases, chains


def replay_chain(base_var: str, base: Node, chain: list[Node],
                 ops: Operands | None = None) -> list[str]:
    lines, src, name = [], base, base_var
    for view in chain:
        lines.append(f"{view.name} = {view_call(name, src, view, ops)}")
        src, name = view, view.name
    return lines


def merged_groups(shape: tuple[int, ...], operands: list[tuple[int, ...]],
                  dims: list[int]) -> bool:
    """Whether ``dims`` (consecutive) index every operand (given by its expanded strides at
    the traced shape) with one stride."""
    real = [d for d in dims if shape[d] != 1]
    for st in operands:
        for a, b in zip(real, real[1:], strict=False):
            if st[a] != st[b] * shape[b]:
                return False
    return True


def expanded_strides(node: Node, shape: tuple[int, ...]) -> tuple[int, ...]:
    """Strides of a contiguous tensor of ``node.shape`` expanded to ``shape``."""
    own = list(node.shape)
    st = [0] * len(shape)
    acc = 1
    for k in range(len(own) - 1, -1, -1):
        j = len(shape) - len(own) + k
        st[j] = 0 if own[k] == 1 and shape[j] != 1 else acc
        acc *= own[k]
    return tuple(st)


def unit_dims(shape: tuple[int, ...], groups: list[list[int]]) -> list[int | None]:
    """For each group, its innermost dimension of size > 1 (None: the group has none)."""
    out: list[int | None] = []
    for g in groups:
        real = [d for d in g if shape[d] != 1]
        out.append(real[-1] if real else None)
    return out


def prod(values: Any) -> int:
    return math.prod(values)


def broadcasts(small: tuple[int, ...], big: tuple[int, ...]) -> bool:
    """A value of shape ``small`` broadcasts to ``big`` (numpy's rules)."""
    return len(small) <= len(big) and all(
        s in (1, b) for s, b in zip(reversed(small), reversed(big), strict=False))


@dataclass(frozen=True)
class ProductWithEpilogue:
    """One matrix product or convolution of external operands (``core``), the output it
    ends in (``out``, after the views in ``chain``), its element-wise epilogue and the
    external values that epilogue reads."""

    core: Node
    out: Node
    chain: list[Node]
    epilogue: list[Node]
    exts: list[Node]


def product_with_epilogue(graph: Graph, kind: str, what: str) -> ProductWithEpilogue:
    """The graph as one ``kind`` node (``what``: "a matrix product", "a convolution") with a
    fused element-wise epilogue, or why it is not."""
    noun = what.split(" ", 1)[1]
    cores = [n for n in graph.nodes if n.kind == kind]
    if len(cores) > 1:
        raise NotDerivable(f"{len(cores)} {noun}s: no template for more than one")
    core = cores[0]
    if not all(is_external(a) for a in core.inputs()):
        raise NotDerivable(f"{what} of computed values (a prologue): no template")
    bases, chains = peel_output_views(graph)
    if len(bases) != 1:
        raise NotDerivable(f"{what} with several outputs: no template")
    out = bases[0]
    if out is not core and out.kind != "ew":
        raise NotDerivable("the model returns an input unchanged")
    epilogue = [n for n in graph.nodes if n.kind == "ew"]
    for n in graph.nodes:
        if n.kind == "view" and not is_external(n) and n not in chains[0]:
            raise NotDerivable(f"a view between the {noun} and its epilogue: no template")
    exts = sorted({e for n in epilogue for e in n.inputs() if is_external(e)},
                  key=graph.nodes.index)
    for n in epilogue + exts:
        if not broadcasts(n.shape, core.shape):
            raise NotDerivable(f"an epilogue operand that does not broadcast to {what}")
    return ProductWithEpilogue(core, out, chains[0], epilogue, exts)

