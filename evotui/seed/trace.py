"""Trace a task's ``Model`` to aten ops with ``torch.export`` and rewrite them into the
seed graph (``graph.Node``): composite ops (softmax, layer norm, vector norms, variance …)
become reductions and element-wise nodes; anything else stops with a one-line reason."""

from __future__ import annotations

import inspect
import logging
import math
import operator
import warnings
from typing import Any

from evotui.seed.graph import Graph, Node, NotDerivable

# aten name -> (seed op, number of tensor-or-scalar operands taken from args)
_EW = {
    "relu": 1, "sigmoid": 1, "tanh": 1, "exp": 1, "exp2": 1, "log": 1, "log2": 1, "log1p": 1,
    "expm1": 1, "sqrt": 1, "rsqrt": 1, "abs": 1, "neg": 1, "erf": 1, "sin": 1, "cos": 1,
    "reciprocal": 1, "floor": 1, "ceil": 1, "sign": 1, "logical_not": 1, "isnan": 1,
    "silu": 1, "mish": 1, "hardswish": 1, "hardsigmoid": 1, "round": 1, "trunc": 1,
    "mul": 2, "div": 2, "maximum": 2, "minimum": 2, "eq": 2, "ne": 2, "gt": 2, "ge": 2,
    "lt": 2, "le": 2, "logical_and": 2, "logical_or": 2, "pow": 2, "atan2": 2, "where": 3,
    "fmod": 2, "remainder": 2,
}
_IDENTITY = {"clone", "alias", "detach", "lift_fresh_copy", "contiguous", "dropout"}
_VIEWS = {"view", "_unsafe_view", "reshape", "permute", "t", "transpose", "unsqueeze",
          "squeeze", "expand", "flatten", "unflatten"}
_NO_TEMPLATE = {
    "convolution_backward": "convolutions",
    "adaptive_avg_pool2d": "adaptive pooling",
    "_adaptive_avg_pool2d": "adaptive pooling",
    "gather": "gathers", "index": "indexing", "scatter": "scatters", "embedding": "embeddings",
    "sort": "sorting", "topk": "top-k", "arange": "index arithmetic (arange)",
}


def export_model(model: Any, inputs: list[Any]) -> Any:
    import torch

    for name in ("torch._subclasses.fake_tensor", "torch._dynamo", "torch.export",
                 "torch.fx.experimental.symbolic_shapes"):
        logging.getLogger(name).setLevel(logging.CRITICAL)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ep = torch.export.export(model, tuple(inputs), strict=False)
            return ep.run_decompositions()
    except Exception as e:  # noqa: BLE001 - any tracing failure is a reason, not a crash
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        raise NotDerivable(f"the reference could not be traced ({type(e).__name__}: "
                           f"{first[:160]})") from None


def build_graph(model: Any, inputs: list[Any], allow_torch: tuple[str, ...] = ()) -> Graph:
    """The seed graph of ``model`` called on ``inputs`` (small, real tensors)."""
    ep = export_model(model, inputs)
    return _Translator(ep, model, allow_torch).run(len(inputs))


class _Translator:
    def __init__(self, ep: Any, model: Any, allow_torch: tuple[str, ...]) -> None:
        self.ep = ep
        self.model = model
        self.allow = {a.removeprefix("aten::").split(".")[0] for a in allow_torch}
        self.nodes: list[Node] = []
        self.env: dict[str, Any] = {}
        self.count = 0

    # -- helpers ---------------------------------------------------------------------------
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

    # -- translation -----------------------------------------------------------------------
    def run(self, n_inputs: int) -> Graph:
        import torch

        specs = self.ep.graph_signature.input_specs
        user = 0
        for node, spec in zip(
                [n for n in self.ep.graph.nodes if n.op == "placeholder"], specs, strict=True):
            val = node.meta.get("val")
            kind = spec.kind.name
            if kind == "USER_INPUT":
                if isinstance(val, torch.Tensor):
                    self.env[node.name] = self.add("input", "input", (), like=val, index=user)
                else:
                    self.env[node.name] = val
                user += 1
            elif kind in ("PARAMETER", "BUFFER"):
                self.env[node.name] = self.add("param", "param", (), like=val, fqn=spec.target)
            else:
                raise NotDerivable(f"the model holds a {kind.lower().replace('_', ' ')} "
                                   "that is not a parameter or buffer")
        outputs: list[Node] = []
        specs_out = self.ep.graph_signature.output_specs
        for node in self.ep.graph.nodes:
            if node.op == "call_function":
                self.env[node.name] = self.call(node)
            elif node.op == "output":
                for value, spec in zip(node.args[0], specs_out, strict=True):
                    if spec.kind.name == "BUFFER_MUTATION" and _statistics(spec.target):
                        # training-mode norm statistics: forward's outputs do not read them
                        continue
                    if spec.kind.name != "USER_OUTPUT":
                        raise NotDerivable("the model updates its buffers or inputs in forward")
                    got = self.env.get(value.name) if hasattr(value, "name") else value
                    if not isinstance(got, Node):
                        raise NotDerivable("the model returns something other than tensors")
                    outputs.append(got)
        live: set[Node] = set()
        stack = list(outputs)
        while stack:
            n = stack.pop()
            if n not in live:
                live.add(n)
                stack.extend(n.inputs())
        self.nodes = [n for n in self.nodes if n in live]
        params = list(inspect.signature(self.model.forward).parameters)
        return Graph(self.nodes, outputs, params, n_inputs)

    def arg(self, a: Any) -> Any:
        if hasattr(a, "name") and hasattr(a, "op"):
            return self.env[a.name]
        if isinstance(a, list | tuple):
            return type(a)(self.arg(x) for x in a)
        return a

    def call(self, fx: Any) -> Any:
        import torch

        target = fx.target
        args = [self.arg(a) for a in fx.args]
        kwargs = {k: self.arg(v) for k, v in fx.kwargs.items()}
        val = fx.meta.get("val")
        if target is operator.getitem:
            return args[0][args[1]]
        name = getattr(target, "__name__", str(target)).split(".")[0]
        if name in self.allow and name not in _IDENTITY:
            if not isinstance(val, torch.Tensor):
                raise NotDerivable(f"aten::{name} kept in torch returns several values: "
                                   "no template for it")
            return self.add("torch", name, tuple(a for a in args if isinstance(a, Node)),
                            like=val, call_args=list(args), call_kwargs=kwargs)
        method = getattr(self, f"op_{name}", None)
        if method is not None:
            return method(args, kwargs, val)
        if name in _IDENTITY:
            return args[0]
        if name in _VIEWS:
            return self.add("view", name, (args[0],), like=val, view_args=list(args[1:]))
        if name in _EW:
            operands = tuple(args[:_EW[name]])
            return self.ew(name, *operands, like=val)
        what = _NO_TEMPLATE.get(name)
        hint = f"--allow-torch aten::{name}"
        if what:
            raise NotDerivable(f"aten::{name}: no template for {what}; pass --seed FILE or {hint}")
        raise NotDerivable(f"aten::{name}: no template for this op; pass --seed FILE or {hint}")

    # ops with arguments the templates need in another form
    def op_add(self, a: list, kw: dict, val: Any) -> Node:
        alpha = kw.get("alpha", 1)
        b = a[1] if alpha == 1 else self.ew("mul", a[1], alpha)
        return self.ew("add", a[0], b, like=val)

    def op_sub(self, a: list, kw: dict, val: Any) -> Node:
        alpha = kw.get("alpha", 1)
        b = a[1] if alpha == 1 else self.ew("mul", a[1], alpha)
        return self.ew("sub", a[0], b, like=val)

    def op_rsub(self, a: list, kw: dict, val: Any) -> Node:
        return self.ew("sub", a[1], a[0], like=val)

    def op_div(self, a: list, kw: dict, val: Any) -> Node:
        mode = kw.get("rounding_mode")
        q = self.ew("div", a[0], a[1], like=val)
        if mode is None:
            return q
        return self.ew("floor" if mode == "floor" else "trunc", q, like=val)

    def op_clamp(self, a: list, kw: dict, val: Any) -> Node:
        lo = a[1] if len(a) > 1 else kw.get("min")
        hi = a[2] if len(a) > 2 else kw.get("max")
        return self.ew("clamp", a[0], lo, hi, like=val)

    def op_hardtanh(self, a: list, kw: dict, val: Any) -> Node:
        return self.ew("clamp", a[0], a[1] if len(a) > 1 else -1.0, a[2] if len(a) > 2 else 1.0,
                       like=val)

    def op_leaky_relu(self, a: list, kw: dict, val: Any) -> Node:
        return self.ew("leaky_relu", a[0], a[1] if len(a) > 1 else 0.01, like=val)

    def op_elu(self, a: list, kw: dict, val: Any) -> Node:
        alpha, scale, in_scale = (list(a[1:]) + [1.0, 1.0, 1.0])[:3]
        return self.ew("elu", a[0], alpha, scale, in_scale, like=val)

    def op_gelu(self, a: list, kw: dict, val: Any) -> Node:
        approx = kw.get("approximate", a[1] if len(a) > 1 else "none")
        return self.ew("gelu_tanh" if approx == "tanh" else "gelu", a[0], like=val)

    def op_softplus(self, a: list, kw: dict, val: Any) -> Node:
        beta, threshold = (list(a[1:]) + [1.0, 20.0])[:2] if len(a) > 1 else (1.0, 20.0)
        return self.ew("softplus", a[0], beta, threshold, like=val)

    def op_pow(self, a: list, kw: dict, val: Any) -> Node:
        if isinstance(a[0], Node) and not isinstance(a[1], Node):
            return self.ew("pow_scalar", a[0], float(a[1]), like=val)
        return self.ew("pow", a[0], a[1], like=val)

    def op__to_copy(self, a: list, kw: dict, val: Any) -> Node:
        if val is not None and str(val.device) != "cpu" and str(val.device) != "meta":
            raise NotDerivable("the model moves a tensor to another device")
        return self.ew("cast", a[0], like=val)

    def op_scalar_tensor(self, a: list, kw: dict, val: Any) -> Any:
        return float(a[0])

    def op_full_like(self, a: list, kw: dict, val: Any) -> Any:
        return self.ew("fill", a[0], float(a[1]), like=val)

    def op__softmax(self, a: list, kw: dict, val: Any) -> Node:
        x, dim = a[0], a[1]
        m = self.reduce("max", x, [dim], True)
        e = self.ew("exp", self.ew("sub", x, m))
        return self.ew("div", e, self.reduce("sum", e, [dim], True), like=val)

    def op__log_softmax(self, a: list, kw: dict, val: Any) -> Node:
        x, dim = a[0], a[1]
        shifted = self.ew("sub", x, self.reduce("max", x, [dim], True))
        lse = self.ew("log", self.reduce("sum", self.ew("exp", shifted), [dim], True))
        return self.ew("sub", shifted, lse, like=val)

    def op_sum(self, a: list, kw: dict, val: Any) -> Node:
        dims = list(a[1]) if len(a) > 1 and a[1] is not None else []
        keep = bool(a[2]) if len(a) > 2 else bool(kw.get("keepdim", False))
        return self.reduce("sum", a[0], dims, keep)

    def op_mean(self, a: list, kw: dict, val: Any) -> Node:
        dims = list(a[1]) if len(a) > 1 and a[1] is not None else []
        keep = bool(a[2]) if len(a) > 2 else bool(kw.get("keepdim", False))
        return self.mean(a[0], dims, keep)

    def _minmax(self, op: str, a: list, kw: dict) -> Any:
        if len(a) == 1:
            return self.reduce(op, a[0], [], False)
        dims = list(a[1]) if isinstance(a[1], list | tuple) else [a[1]]
        keep = bool(a[2]) if len(a) > 2 else bool(kw.get("keepdim", False))
        return self.reduce(op, a[0], dims, keep)

    def op_amax(self, a: list, kw: dict, val: Any) -> Node:
        return self._minmax("max", a, kw)

    def op_amin(self, a: list, kw: dict, val: Any) -> Node:
        return self._minmax("min", a, kw)

    def op_max(self, a: list, kw: dict, val: Any) -> Any:
        if len(a) > 1 and isinstance(a[1], Node):
            return self.ew("maximum", a[0], a[1], like=val)
        if len(a) == 1:
            return self._minmax("max", a, kw)
        return (self._minmax("max", a, kw), self._minmax("argmax", a, kw))

    def op_min(self, a: list, kw: dict, val: Any) -> Any:
        if len(a) > 1 and isinstance(a[1], Node):
            return self.ew("minimum", a[0], a[1], like=val)
        if len(a) == 1:
            return self._minmax("min", a, kw)
        return (self._minmax("min", a, kw), self._minmax("argmin", a, kw))

    def op_argmax(self, a: list, kw: dict, val: Any) -> Node:
        if len(a) < 2 or a[1] is None:
            raise NotDerivable("aten::argmax over all dimensions: no template; pass --seed FILE")
        return self._minmax("argmax", a, kw)

    def op_argmin(self, a: list, kw: dict, val: Any) -> Node:
        if len(a) < 2 or a[1] is None:
            raise NotDerivable("aten::argmin over all dimensions: no template; pass --seed FILE")
        return self._minmax("argmin", a, kw)

    def op_any(self, a: list, kw: dict, val: Any) -> Node:
        import torch

        dims = a[1] if len(a) > 1 else []
        dims = list(dims) if isinstance(dims, list | tuple) else [dims]
        keep = bool(a[2]) if len(a) > 2 else bool(kw.get("keepdim", False))
        node = self.reduce("max", self.ew("ne", a[0], 0.0), dims, keep)
        node.dtype = torch.bool
        return node

    def op_var(self, a: list, kw: dict, val: Any) -> Node:
        dims = list(a[1]) if len(a) > 1 and a[1] is not None else []
        correction = kw.get("correction", 1)
        return self.var(a[0], dims, bool(kw.get("keepdim", False)),
                        1.0 if correction is None else float(correction))

    def op_linalg_vector_norm(self, a: list, kw: dict, val: Any) -> Node:
        x = a[0]
        order = float(a[1]) if len(a) > 1 else float(kw.get("ord", 2))
        dims = list(a[2]) if len(a) > 2 and a[2] is not None else list(kw.get("dim") or [])
        keep = bool(a[3]) if len(a) > 3 else bool(kw.get("keepdim", False))
        ax = self.ew("abs", x)
        if math.isinf(order):
            return self.reduce("max" if order > 0 else "min", ax, dims, keep)
        if order == 1:
            return self.reduce("sum", ax, dims, keep)
        if order == 2:
            return self.ew("sqrt", self.reduce("sum", self.ew("mul", x, x), dims, keep))
        powered = self.ew("pow_scalar", ax, order)
        return self.ew("pow_scalar", self.reduce("sum", powered, dims, keep), 1.0 / order)

    def op_native_layer_norm(self, a: list, kw: dict, val: Any) -> tuple[Node, None, None]:
        x, normalized, w, b, eps = a[:5]
        dims = list(range(len(x.shape) - len(normalized), len(x.shape)))
        m = self.mean(x, dims, True)
        d = self.ew("sub", x, m)
        rstd = self.ew("rsqrt", self.ew("add", self.mean(self.ew("mul", d, d), dims, True), eps))
        y = self.ew("mul", d, rstd)
        if w is not None:
            y = self.ew("mul", y, w)
        if b is not None:
            y = self.ew("add", y, b)
        return (y, None, None)

    def _pool(self, op: str, x: Node, val: Any, d: int, kernel: Any, stride: Any, padding: Any,
              dilation: Any, ceil_mode: bool, **extra: Any) -> Node:
        def dims(v: Any, default: list[int]) -> list[int]:
            if v is None or (isinstance(v, list | tuple) and not v):
                return list(default)
            values = list(v) if isinstance(v, list | tuple) else [v]
            return values * d if len(values) == 1 else values

        k = dims(kernel, [1] * d)
        return self.add("pool", op, (x,), like=val, kernel=k, stride=dims(stride, k),
                        padding=dims(padding, [0] * d), dilation=dims(dilation, [1] * d),
                        ceil_mode=bool(ceil_mode), **extra)

    def op_max_pool2d_with_indices(self, a: list, kw: dict, val: Any) -> tuple[Node, None]:
        a = a + [None] * (6 - len(a))
        return (self._pool("max", a[0], val[0], 2, a[1], a[2], a[3], a[4], a[5] or False), None)

    def op_max_pool3d_with_indices(self, a: list, kw: dict, val: Any) -> tuple[Node, None]:
        a = a + [None] * (6 - len(a))
        return (self._pool("max", a[0], val[0], 3, a[1], a[2], a[3], a[4], a[5] or False), None)

    def _avg(self, a: list, kw: dict, val: Any, d: int) -> Node:
        a = a + [None] * (7 - len(a))
        include = True if a[5] is None else bool(a[5])
        return self._pool("avg", a[0], val, d, a[1], a[2], a[3], None, a[4] or False,
                          count_include_pad=include, divisor=a[6])

    def op_avg_pool2d(self, a: list, kw: dict, val: Any) -> Node:
        return self._avg(a, kw, val, 2)

    def op_avg_pool3d(self, a: list, kw: dict, val: Any) -> Node:
        return self._avg(a, kw, val, 3)

    def op_cumsum(self, a: list, kw: dict, val: Any) -> Node:
        return self.add("scan", "sum", (a[0],), like=val, dim=a[1] % max(1, len(a[0].shape)))

    def op_cumprod(self, a: list, kw: dict, val: Any) -> Node:
        return self.add("scan", "prod", (a[0],), like=val, dim=a[1] % max(1, len(a[0].shape)))

    def raw_view(self, x: Node, expr: str, shape: tuple[int, ...], ref: Node | None = None
                 ) -> Node:
        return self.add("view", "raw", (x,), shape=shape, dtype=x.dtype, expr=expr, ref=ref)

    def op__native_batch_norm_legit(self, a: list, kw: dict, val: Any) -> tuple[Node, None, None]:
        if len(a) > 6:
            raise NotDerivable("aten::_native_batch_norm_legit with running statistics: no "
                               "template; pass --seed FILE")
        x, w, b, _training, _momentum, eps = a[:6]
        dims = [0] + list(range(2, len(x.shape)))
        m = self.mean(x, dims, True)
        d = self.ew("sub", x, m)
        rstd = self.ew("rsqrt", self.ew("add", self.mean(self.ew("mul", d, d), dims, True), eps))
        y = self.ew("mul", d, rstd)
        per_channel = [x.shape[1]] + [1] * (len(x.shape) - 2)
        for p, op in ((w, "mul"), (b, "add")):
            if p is not None:
                view = self.add("view", "reshape", (p,), shape=tuple(per_channel), dtype=p.dtype,
                                view_args=[per_channel])
                y = self.ew(op, y, view)
        return (y, None, None)

    def op__native_batch_norm_legit_functional(self, a: list, kw: dict, val: Any) -> tuple:
        x, w, b, _mean, _var, training = a[:6]
        eps = a[7]
        if not training:
            raise NotDerivable("batch norm with running statistics: no template")
        spatial = list(range(2, len(x.shape)))

        def mean(v: Node) -> Node:  # over batch and space, as a mean of per-sample means
            inner = self.mean(v, spatial, True) if spatial else v
            return self.mean(inner, [0], True)

        m = mean(x)
        d = self.ew("sub", x, m)
        rstd = self.ew("rsqrt", self.ew("add", mean(self.ew("mul", d, d)), eps))
        y = self.ew("mul", d, rstd)
        per_channel = [x.shape[1]] + [1] * len(spatial)
        for p, op in ((w, "mul"), (b, "add")):
            if p is not None:
                view = self.add("view", "reshape", (p,), shape=tuple(per_channel), dtype=p.dtype,
                                view_args=[per_channel])
                y = self.ew(op, y, view)
        return (y, None, None, None, None)

    def op__native_batch_norm_legit_no_training(self, a: list, kw: dict, val: Any) -> tuple:
        x, w, b, mean, var, _momentum, eps = a[:7]
        per_channel = [x.shape[1]] + [1] * (len(x.shape) - 2)

        def channel(p: Node) -> Node:
            return self.add("view", "reshape", (p,), shape=tuple(per_channel), dtype=p.dtype,
                            view_args=[per_channel])

        y = self.ew("mul", self.ew("sub", x, channel(mean)),
                    self.ew("rsqrt", self.ew("add", channel(var), eps)))
        if w is not None:
            y = self.ew("mul", y, channel(w))
        if b is not None:
            y = self.ew("add", y, channel(b))
        return (y, None, None)

    def op_native_group_norm(self, a: list, kw: dict, val: Any) -> tuple[Node, None, None]:
        x, w, b, n, c, hw, groups, eps = a[:8]
        shape4 = (n, groups, c // groups, hw)
        x4 = self.raw_view(x, f"{{x}}.reshape({{x}}.shape[0], {groups}, -1, "
                              "math.prod({x}.shape[2:]))", shape4)
        m = self.mean(x4, [2, 3], True)
        d = self.ew("sub", x4, m)
        rstd = self.ew("rsqrt", self.ew("add", self.mean(self.ew("mul", d, d), [2, 3], True), eps))
        y = self.ew("mul", d, rstd)
        for p, op in ((w, "mul"), (b, "add")):
            if p is not None:
                y = self.ew(op, y, self.raw_view(p, f"{{x}}.reshape({groups}, -1, 1)",
                                                 (groups, c // groups, 1)))
        return (self.raw_view(y, "{x}.reshape({ref}.shape)", tuple(x.shape), ref=x), None, None)

    def op_convolution(self, a: list, kw: dict, val: Any) -> Node:
        x, w, bias, stride, padding, dilation, transposed, output_padding, groups = a[:9]
        conv = self.add("conv", "conv", (x, w), like=val, stride=list(stride),
                        padding=list(padding), dilation=list(dilation),
                        transposed=bool(transposed), output_padding=list(output_padding),
                        groups=int(groups))
        if bias is None:
            return conv
        d = len(val.shape) - 2
        per_channel = self.raw_view(bias, "{x}.view(-1" + ", 1" * d + ")",
                                    (val.shape[1],) + (1,) * d)
        return self.ew("add", conv, per_channel, like=val)

    def op_mm(self, a: list, kw: dict, val: Any) -> Node:
        return self.add("mm", "mm", (a[0], a[1]), like=val)

    def op_bmm(self, a: list, kw: dict, val: Any) -> Node:
        return self.add("mm", "bmm", (a[0], a[1]), like=val)

    def op_addmm(self, a: list, kw: dict, val: Any) -> Node:
        beta, alpha = kw.get("beta", 1), kw.get("alpha", 1)
        prod = self.add("mm", "mm", (a[1], a[2]), like=val)
        if alpha != 1:
            prod = self.ew("mul", prod, alpha)
        bias = a[0] if beta == 1 else self.ew("mul", a[0], beta)
        return self.ew("add", prod, bias, like=val)


def _statistics(target: str | None) -> bool:
    return bool(target) and target.rsplit(".", 1)[-1] in (
        "running_mean", "running_var", "num_batches_tracked")


def _broadcast(shapes: list[tuple[int, ...]]) -> tuple[int, ...]:
    rank = max((len(s) for s in shapes), default=0)
    out = [1] * rank
    for s in shapes:
        for i, d in enumerate(s):
            j = rank - len(s) + i
            out[j] = d if out[j] == 1 else out[j]
    return tuple(out)
