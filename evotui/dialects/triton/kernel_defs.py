"""Which defs a file makes Triton kernels of: those decorated ``@triton.jit`` (however
imported) and those a top-level ``name = triton.jit(fn)`` jits; and each one's text as
Triton parses it. What the jit and kernel rules (jit_rules, kernel_rules) check."""

from __future__ import annotations

import ast
import textwrap
from typing import NamedTuple

from evotui.dialects.triton.ast_paths import dotted, module_aliases
from evotui.dialects.triton.scope_rules import bindings
from evotui.dialects.triton.text_rules import python_lines


def decorator_path(dec: ast.expr, aliases: dict[str, str]) -> str | None:
    return dotted(dec.func if isinstance(dec, ast.Call) else dec, aliases)


def jit_defs(tree: ast.Module, aliases: dict[str, str]) -> list[ast.FunctionDef]:
    """The defs decorated with ``triton.jit`` (however imported), and those a top-level
    ``kernel = triton.jit(fn)`` makes kernels of (``kernel_assignments``)."""
    decorated = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)
                 and any(decorator_path(d, aliases) == "triton.jit" for d in n.decorator_list)]
    called = [fn for fn, _ in kernel_assignments(tree, aliases).values()]
    return decorated + [fn for fn in dict.fromkeys(called) if fn not in decorated]


WRAPPERS = {"triton.autotune", "triton.heuristics"}


def _constant_option(value: ast.expr) -> bool:
    """`do_not_specialize=["eps"]`, `debug=True`: options that are constants (not a callable
    Triton would call, such as `repr=` or `launch_metadata=`)."""
    if isinstance(value, ast.List | ast.Tuple):
        return all(_constant_option(v) for v in value.elts)
    return isinstance(value, ast.Constant)


def kernel_assignments(tree: ast.Module, aliases: dict[str, str]
                       ) -> dict[str, tuple[ast.FunctionDef, frozenset[int]]]:
    """``softmax = triton.jit(_softmax)``, ``k = triton.autotune(configs, key)(triton.jit(f))``
    at the top level: triton's decorators called as functions, as code generators and some
    libraries write them. Each such name → the def it makes a kernel of (a top-level def
    without decorators, bound once in the file, so the kernel rules check its body) and the
    ids of the decorator references in the expression."""
    counts: dict[str, int] = {}
    for name, _ in bindings(tree):
        counts[name] = counts.get(name, 0) + 1
    plain = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)
             and not n.decorator_list and counts.get(n.name) == 1}

    def kernel_of(node: ast.expr, refs: list[int]) -> ast.FunctionDef | None:
        if not isinstance(node, ast.Call):
            return None
        func = node.func
        if (isinstance(func, ast.Call) and decorator_path(func, aliases) in WRAPPERS
                and len(node.args) == 1 and not node.keywords):
            refs.append(id(func.func))
            return kernel_of(node.args[0], refs)
        if (dotted(func, aliases) == "triton.jit" and len(node.args) == 1
                and isinstance(node.args[0], ast.Name) and node.args[0].id in plain
                and all(_constant_option(k.value) for k in node.keywords)):
            refs.append(id(func))
            return plain[node.args[0].id]
        return None

    out: dict[str, tuple[ast.FunctionDef, frozenset[int]]] = {}
    for stmt in tree.body:
        target = (stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                  else stmt.target if isinstance(stmt, ast.AnnAssign) else None)
        if not isinstance(target, ast.Name) or stmt.value is None:
            continue
        refs: list[int] = []
        fn = kernel_of(stmt.value, refs)
        if fn is not None:
            out[target.id] = (fn, frozenset(refs))
    return out


class KernelText(NamedTuple):
    def_line: int  # the `def` line (after the decorators)
    text: str  # the def's lines, dedented: what Triton must parse for it


def kernel_texts(source: str) -> dict[int, KernelText]:
    """The checked kernels by ``co_firstlineno`` (the first decorator's line: what the launch
    hooks accept as the function a kernel object runs), each with its ``def`` statement's
    text as Triton takes it from the file: from the ``def`` line to the last line of the
    body, dedented. Lines are Python's (``text_rules.python_lines``), as pinned for
    ``inspect``. Raises SyntaxError for a file that does not parse."""
    tree = ast.parse(source)
    lines = python_lines(source)
    return {min([d.lineno for d in n.decorator_list] + [n.lineno]):
            KernelText(n.lineno, textwrap.dedent("".join(lines[n.lineno - 1:n.end_lineno])))
            for n in jit_defs(tree, module_aliases(tree))}
