"""Trace a task's ``Model`` to aten ops with ``torch.export`` and rewrite them into the
seed graph (``graph.Node``): composite ops (softmax, layer norm, vector norms, variance …)
become reductions and element-wise nodes; anything else stops with a one-line reason."""

from __future__ import annotations

import inspect
import logging
import operator
import warnings
from typing import Any

from evotui.seed.composite_rewrites import CompositeRewrites
from evotui.seed.graph import Graph, Node, NotDerivable
from evotui.seed.pointwise_rewrites import PointwiseRewrites

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


class _Translator(PointwiseRewrites, CompositeRewrites):
    """The exported program's aten calls, node by node, into seed graph nodes: an ``op_<name>``
    rewrite where there is one, else an identity, a view or a plain element-wise op."""

    def __init__(self, ep: Any, model: Any, allow_torch: tuple[str, ...]) -> None:
        super().__init__()
        self.ep = ep
        self.model = model
        self.allow = {a.removeprefix("aten::").split(".")[0] for a in allow_torch}
        self.env: dict[str, Any] = {}

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
            elif kind == "CONSTANT_TENSOR" and spec.target in self.ep.constants:
                # a tensor made in forward: its real value, folded or turned into a literal
                self.env[node.name] = self.ep.constants[spec.target].detach().clone()
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
        if _has(args, kwargs, torch.Tensor):
            if not _has(args, kwargs, Node):
                return _fold(target, args, kwargs)
            args = [_literal(a, name) for a in args]
            kwargs = {k: _literal(v, name) for k, v in kwargs.items()}
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



def _has(args: list, kwargs: dict, cls: type) -> bool:
    def any_of(v: Any) -> bool:
        if isinstance(v, list | tuple):
            return any(any_of(x) for x in v)
        return isinstance(v, cls)

    return any_of(args) or any_of(list(kwargs.values()))


def _fold(target: Any, args: list, kwargs: dict) -> Any:
    """An op of constants only: computed now, at trace time."""
    import torch

    try:
        with torch.no_grad():
            return target(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - a constant the reference computes oddly
        raise NotDerivable(f"a constant tensor computed in forward ({type(e).__name__})") from None


def _literal(v: Any, name: str) -> Any:
    """A constant tensor met by traced values: a single value becomes a Python scalar."""
    import torch

    if isinstance(v, list | tuple):
        return type(v)(_literal(x, name) for x in v)
    if not isinstance(v, torch.Tensor):
        return v
    if v.dim() != 0:
        raise NotDerivable(f"aten::{name} of a constant tensor of shape {list(v.shape)} made in "
                           "forward: no template; pass --seed FILE")
    return v.item()


def _statistics(target: str | None) -> bool:
    return bool(target) and target.rsplit(".", 1)[-1] in (
        "running_mean", "running_var", "num_batches_tracked")
