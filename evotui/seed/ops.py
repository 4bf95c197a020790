"""Triton expressions for the seed graph's element-wise ops, computed in fp32."""

from __future__ import annotations

import math
from typing import Any

from evotui.seed.graph import Node, NotDerivable

_UNARY = {
    "relu": "tl.maximum({0}, 0.0)",
    "sigmoid": "tl.sigmoid({0})",
    "tanh": "(2.0 * tl.sigmoid(2.0 * {0}) - 1.0)",
    "exp": "tl.exp({0})",
    "exp2": "tl.exp2({0})",
    "log": "tl.log({0})",
    "log2": "tl.log2({0})",
    "log1p": "tl.log(1.0 + {0})",
    "expm1": "(tl.exp({0}) - 1.0)",
    "sqrt": "tl.sqrt({0})",
    "rsqrt": "tl.rsqrt({0})",
    "abs": "tl.abs({0})",
    "neg": "(-{0})",
    "erf": "tl.math.erf({0})",
    "sin": "tl.sin({0})",
    "cos": "tl.cos({0})",
    "reciprocal": "(1.0 / {0})",
    "floor": "tl.floor({0})",
    "ceil": "tl.ceil({0})",
    "trunc": "tl.where({0} < 0.0, tl.ceil({0}), tl.floor({0}))",
    "round": "tl.extra.libdevice.rint({0})",
    "sign": "tl.where({0} > 0.0, 1.0, tl.where({0} < 0.0, -1.0, 0.0))",
    "logical_not": "({0} == 0)",
    "isnan": "({0} != {0})",
    "silu": "({0} * tl.sigmoid({0}))",
    "hardsigmoid": "tl.minimum(tl.maximum({0} / 6.0 + 0.5, 0.0), 1.0)",
    "hardswish": "({0} * tl.minimum(tl.maximum({0} + 3.0, 0.0), 6.0) / 6.0)",
    "gelu": "(0.5 * {0} * (1.0 + tl.math.erf({0} * 0.7071067811865476)))",
    "gelu_tanh": "(0.5 * {0} * (1.0 + (2.0 * tl.sigmoid(2.0 * (0.7978845608028654 * ({0} + "
                 "0.044715 * {0} * {0} * {0}))) - 1.0)))",
    "mish": "({0} * (2.0 * tl.sigmoid(2.0 * tl.where({0} > 20.0, {0}, "
            "tl.log(1.0 + tl.exp(tl.minimum({0}, 20.0))))) - 1.0))",
}
_BINARY = {
    "add": "({0} + {1})", "sub": "({0} - {1})", "mul": "({0} * {1})", "div": "({0} / {1})",
    "maximum": "tl.maximum({0}, {1})", "minimum": "tl.minimum({0}, {1})",
    "eq": "({0} == {1})", "ne": "({0} != {1})", "gt": "({0} > {1})", "ge": "({0} >= {1})",
    "lt": "({0} < {1})", "le": "({0} <= {1})",
    "logical_and": "(({0} != 0) & ({1} != 0))", "logical_or": "(({0} != 0) | ({1} != 0))",
    "pow": "tl.exp({1} * tl.log({0}))",
    "atan2": "tl.extra.libdevice.atan2({0}, {1})",
    "fmod": "tl.extra.libdevice.fmod({0}, {1})",
    "remainder": "({0} - tl.floor({0} / {1}) * {1})",
}
_PREDICATES = {"eq", "ne", "gt", "ge", "lt", "le", "logical_and", "logical_or", "logical_not",
               "isnan"}
_TL_FLOAT = {"torch.float16": "tl.float16", "torch.bfloat16": "tl.bfloat16",
             "torch.float32": "tl.float32", "torch.float64": "tl.float64"}


def literal(v: Any) -> str:
    if isinstance(v, bool):
        return "1.0" if v else "0.0"
    if isinstance(v, int | float):
        f = float(v)
        if math.isinf(f):
            return 'float("inf")' if f > 0 else '-float("inf")'
        if math.isnan(f):
            return 'float("nan")'
        return repr(f)
    raise NotDerivable(f"a constant of type {type(v).__name__} in an element-wise op")


def expression(node: Node, operands: list[str], count: str = "R") -> str:
    """``node`` as a Triton expression of its operands' expressions (already in fp32)."""
    op, a = node.op, operands
    if op in _UNARY:
        text = _UNARY[op].format(a[0])
        return f"{text}.to(tl.float32)" if op in _PREDICATES else text
    if op in _BINARY:
        text = _BINARY[op].format(a[0], a[1])
        return f"{text}.to(tl.float32)" if op in _PREDICATES else text
    if op == "where":
        return f"tl.where({a[0]} != 0, {a[1]}, {a[2]})"
    if op == "clamp":
        x = a[0]
        if a[1] != "None":
            x = f"tl.maximum({x}, {a[1]})"
        if a[2] != "None":
            x = f"tl.minimum({x}, {a[2]})"
        return x
    if op == "leaky_relu":
        return f"tl.where({a[0]} > 0.0, {a[0]}, {a[0]} * {a[1]})"
    if op == "elu":
        x, alpha, scale, in_scale = a
        return (f"tl.where({x} > 0.0, {x} * {scale}, "
                f"{alpha} * {scale} * (tl.exp({x} * {in_scale}) - 1.0))")
    if op == "softplus":
        x, beta, threshold = a
        return (f"tl.where({x} * {beta} > {threshold}, {x}, "
                f"tl.log(1.0 + tl.exp(tl.minimum({x} * {beta}, {threshold}))) / {beta})")
    if op == "pow_scalar":
        return _pow(a[0], float(node.args[1]))
    if op == "cast":
        target = _TL_FLOAT.get(str(node.dtype))
        if target is None:
            raise NotDerivable(f"a cast to {node.dtype}: no template for it")
        return f"{a[0]}.to({target}).to(tl.float32)" if target != "tl.float32" else a[0]
    if op == "fill":
        return f"({a[0]} * 0.0 + {a[1]})"
    if op == "div_count":
        c = float(node.attrs.get("correction", 0.0))
        return f"({a[0]} / ({count} - {c!r}))" if c else f"({a[0]} / {count})"
    raise NotDerivable(f"element-wise op {op}: no template for it")


def _pow(x: str, p: float) -> str:
    if p == 0:
        return f"({x} * 0.0 + 1.0)"
    if p == 0.5:
        return f"tl.sqrt({x})"
    if p == -0.5:
        return f"tl.rsqrt({x})"
    if p.is_integer() and 1 <= abs(p) <= 4:
        prod = " * ".join([x] * int(abs(p)))
        return f"({prod})" if p > 0 else f"(1.0 / ({prod}))"
    if p.is_integer():
        mag = f"tl.exp({abs(p)!r} * tl.log(tl.abs({x})))"
        sign = f"tl.where(({x} < 0.0), {-1.0 if int(p) % 2 else 1.0}, 1.0)"
        return f"({sign} * {mag})" if p > 0 else f"({sign} / {mag})"
    return f"tl.exp({p!r} * tl.log({x}))"


def operand_text(arg: Any, names: dict[Node, str]) -> str:
    return names[arg] if isinstance(arg, Node) else ("None" if arg is None else literal(arg))
