"""The tiny expression language of CUDA launch specs: grid and block sizes, shared memory,
output shapes and scalar kernel arguments as functions of the inputs and the tunables.

Grammar (a subset of Python expressions, checked on the AST; nothing is ever executed):

- names (bound by the harness: tunables, symbols, scalar inputs, model attributes, tensors),
- int and float literals,
- ``+ - * // %`` and unary ``-`` / ``+``,
- calls of ``cdiv(a, b)``, ``min(a, b, ...)``, ``max(a, b, ...)``, ``next_pow2(n)``,
  ``size(t, dim)``, ``stride(t, dim)``, ``numel(t)``, ``ndim(t)`` (``t`` names a tensor).

Everything else (attributes, subscripts, ``/``, ``**``, comparisons, strings, keywords,
lambdas...) is rejected when the expression is parsed.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

MAX_TEXT = 300
MAX_NODES = 80
MAX_INT = 2**62  # a bound on intermediate values: expressions size launches, not bignums


class ExprError(ValueError):
    """A malformed expression (when parsed) or one that cannot be evaluated (when run)."""


TENSOR_FUNCS = {"size": 2, "stride": 2, "numel": 1, "ndim": 1}
SCALAR_FUNCS: dict[str, tuple[int, int | None]] = {  # name -> (min args, max args)
    "cdiv": (2, 2), "min": (2, None), "max": (2, None), "next_pow2": (1, 1),
}
FUNCTIONS = set(TENSOR_FUNCS) | set(SCALAR_FUNCS)

_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
}


@dataclass(frozen=True)
class Expr:
    """A parsed expression: its text, and the names it reads (tensors included)."""

    text: str
    tree: ast.expr
    names: frozenset[str]
    tensor_names: frozenset[str]  # names used as the tensor argument of size/stride/numel/ndim

    def __call__(self, env: Mapping[str, Any]) -> int | float:
        return _eval(self.tree, env, self.text)


def parse(text: Any) -> Expr:
    """Parse one expression; an int or float literal is accepted as its own expression."""
    if isinstance(text, bool) or not isinstance(text, str | int | float):
        raise ExprError(f"expected an expression string or a number, got {text!r}")
    source = str(text).strip()
    if not source:
        raise ExprError("empty expression")
    if len(source) > MAX_TEXT:
        raise ExprError(f"expression longer than {MAX_TEXT} characters")
    try:
        tree = ast.parse(source, mode="eval").body
    except SyntaxError as e:
        raise ExprError(f"{source!r}: {e.msg}") from None
    nodes = list(ast.walk(tree))
    if len(nodes) > MAX_NODES:
        raise ExprError(f"{source!r}: expression too large")
    names: set[str] = set()
    tensors: set[str] = set()
    _check(tree, source, names, tensors)
    return Expr(source, tree, frozenset(names), frozenset(tensors))


def _check(node: ast.expr, text: str, names: set[str], tensors: set[str]) -> None:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, int | float):
            raise ExprError(f"{text!r}: only int and float literals are allowed")
    elif isinstance(node, ast.Name):
        if node.id in FUNCTIONS:
            raise ExprError(f"{text!r}: `{node.id}` is a function, call it")
        names.add(node.id)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        _check(node.operand, text, names, tensors)
    elif isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        _check(node.left, text, names, tensors)
        _check(node.right, text, names, tensors)
    elif isinstance(node, ast.Call):
        _check_call(node, text, names, tensors)
    else:
        what = type(node.op).__name__ if isinstance(node, ast.BinOp | ast.UnaryOp) else type(node).__name__
        raise ExprError(f"{text!r}: `{what}` is not allowed (names, numbers, + - * // %, "
                        f"and {', '.join(sorted(FUNCTIONS))})")


def _check_call(node: ast.Call, text: str, names: set[str], tensors: set[str]) -> None:
    if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
        raise ExprError(f"{text!r}: only {', '.join(sorted(FUNCTIONS))} may be called")
    if node.keywords:
        raise ExprError(f"{text!r}: no keyword arguments")
    name, args = node.func.id, node.args
    if any(isinstance(a, ast.Starred) for a in args):
        raise ExprError(f"{text!r}: no *args")
    if name in TENSOR_FUNCS:
        if len(args) != TENSOR_FUNCS[name]:
            raise ExprError(f"{text!r}: {name}() takes {TENSOR_FUNCS[name]} argument(s)")
        if not isinstance(args[0], ast.Name):
            raise ExprError(f"{text!r}: the first argument of {name}() must name a tensor")
        tensors.add(args[0].id)
        names.add(args[0].id)
        for a in args[1:]:
            _check(a, text, names, tensors)
        return
    low, high = SCALAR_FUNCS[name]
    if len(args) < low or (high is not None and len(args) > high):
        raise ExprError(f"{text!r}: wrong number of arguments to {name}()")
    for a in args:
        _check(a, text, names, tensors)


def _number(v: Any, text: str) -> int | float:
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise ExprError(f"{text!r}: a {type(v).__name__} is not a number")
    if isinstance(v, int) and abs(v) > MAX_INT:
        raise ExprError(f"{text!r}: value out of range")
    return v


def _int(v: Any, text: str, what: str) -> int:
    v = _number(v, text)
    if isinstance(v, float):
        if not v.is_integer():
            raise ExprError(f"{text!r}: {what} must be an integer, got {v}")
        v = int(v)
    return v


def _eval(node: ast.expr, env: Mapping[str, Any], text: str) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in env:
            raise ExprError(f"{text!r}: unknown name `{node.id}`")
        return _number(env[node.id], text)
    if isinstance(node, ast.UnaryOp):
        v = _number(_eval(node.operand, env, text), text)
        return -v if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.BinOp):
        a = _number(_eval(node.left, env, text), text)
        b = _number(_eval(node.right, env, text), text)
        if isinstance(node.op, ast.FloorDiv | ast.Mod) and b == 0:
            raise ExprError(f"{text!r}: division by zero")
        return _number(_BINOPS[type(node.op)](a, b), text)
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    name = node.func.id
    if name in TENSOR_FUNCS:
        assert isinstance(node.args[0], ast.Name)
        t = env.get(node.args[0].id)
        if not hasattr(t, "shape") or not hasattr(t, "stride"):
            raise ExprError(f"{text!r}: `{node.args[0].id}` is not a tensor")
        if name == "numel":
            return int(t.numel())
        if name == "ndim":
            return int(t.dim())
        dim = _int(_eval(node.args[1], env, text), text, "a dimension")
        if not -t.dim() <= dim < t.dim():
            raise ExprError(f"{text!r}: dimension {dim} out of range for a {t.dim()}-d tensor")
        return int(t.shape[dim]) if name == "size" else int(t.stride(dim))
    values = [_eval(a, env, text) for a in node.args]
    if name == "cdiv":
        a, b = (_int(v, text, "cdiv's arguments") for v in values)
        if b <= 0:
            raise ExprError(f"{text!r}: cdiv by {b}")
        return -(-a // b)
    if name == "next_pow2":
        n = _int(values[0], text, "next_pow2's argument")
        return 1 if n <= 1 else 1 << (n - 1).bit_length()
    nums = [_number(v, text) for v in values]
    return min(nums) if name == "min" else max(nums)


def evaluate_int(expr: Expr, env: Mapping[str, Any], what: str) -> int:
    """Evaluate an expression that must give an integer (grid, block, shapes, bytes)."""
    return _int(expr(env), expr.text, what)
