"""Static rules for what a ``@triton.jit`` body may touch: triton, its parameters and
locals, the file's jit functions and module-level constants, and a few builtins — what the
GPU compiler accepts. Under the CPU interpreter a kernel body is plain Python run with the op
policy suspended, so anything else (a global object's method, property, ``__getitem__`` or
operator; a Python helper) would compute unwatched. Part of static_rules.check_source.
"""

from __future__ import annotations

import ast

from backends.base import StaticIssue
from evotui.eval import reasons

# what a `@triton.jit` body may call by bare name besides the file's own jit functions: on
# a GPU nothing else compiles, and under the CPU interpreter anything else is plain Python
JIT_BUILTINS = {"range", "min", "max", "len", "int", "float", "bool", "abs", "print",
                "isinstance", "tuple", "zip", "enumerate", "static_print", "static_assert"}


def _is_jit(fn: ast.FunctionDef) -> bool:
    for dec in fn.decorator_list:
        target = dec.func if isinstance(dec, ast.Call) else dec
        if ast.unparse(target).split(".")[-1] == "jit":
            return True
    return False


def check_kernel_bodies(tree: ast.Module, aliases: dict[str, str]) -> StaticIssue | None:
    """What a ``@triton.jit`` body may touch: triton, its parameters and locals, the file's
    jit functions and module-level constants, and a few builtins — what the GPU compiler
    accepts. Under the CPU interpreter anything else (a global object's method, property,
    ``__getitem__`` or operator) would run as plain Python with the op policy suspended."""
    kernels = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and _is_jit(n)]
    own = {k.name for k in kernels}
    constants: set[str] = set()
    others: set[str] = set()  # module-level names bound to anything else
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            if isinstance(node.value, ast.Name) and node.value.id in own:
                own.update(names)  # `gelu = _gelu_tanh`
            elif node.value is not None and _is_constant(node.value, aliases):
                constants.update(names)
            else:
                others.update(names)
        elif isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name not in own:
            others.add(node.name)
    others -= constants
    for kernel in kernels:
        local = {a.arg for a in kernel.args.args + kernel.args.kwonlyargs}
        for node in ast.walk(ast.Module(body=kernel.body, type_ignores=[])):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                local.add(node.id)
        for stmt in kernel.body:  # decorators and defaults run as ordinary Python: not here
            for node in ast.walk(stmt):
                issue = _check_kernel_node(node, kernel.name, local, own, others, aliases)
                if issue:
                    return issue
    return None


def _is_constant(value: ast.expr, aliases: dict[str, str]) -> bool:
    """``1024``, ``2 ** 10``, ``-1.0``, ``"fp32"``, ``tl.constexpr(64)``, ``tl.float32``:
    what a kernel may read from the module."""
    if isinstance(value, ast.Constant):
        return True
    if isinstance(value, ast.UnaryOp):
        return _is_constant(value.operand, aliases)
    if isinstance(value, ast.BinOp):
        return _is_constant(value.left, aliases) and _is_constant(value.right, aliases)
    if isinstance(value, ast.Call) and ast.unparse(value.func).endswith("constexpr"):
        return all(_is_constant(a, aliases) for a in value.args)
    if isinstance(value, ast.Attribute):  # a dtype or constant of a triton module
        root = root_name(value)
        return root in aliases and (aliases[root] + ".").startswith("triton.")
    return False


def _check_kernel_node(node: ast.AST, kernel: str, local: set[str], own: set[str],
                       others: set[str], aliases: dict[str, str]) -> StaticIssue | None:
    line = getattr(node, "lineno", 0)
    where = f"in the Triton kernel `{kernel}`"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        name = node.func.id
        if not (name in own or name in local or name in JIT_BUILTINS
                or aliases.get(name, "").startswith("triton.")):
            return StaticIssue(reasons.FORBIDDEN_CALL,
                               f"`{name}()` {where}: a kernel may call only triton functions "
                               "and other @triton.jit functions", line)
    elif isinstance(node, ast.Call):
        root = root_name(node.func)
        if root in aliases and not (aliases[root] + ".").startswith("triton."):
            return StaticIssue(reasons.FORBIDDEN_CALL,
                               f"`{ast.unparse(node.func)}()` {where}: a kernel may call only "
                               "triton functions", line)
    elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
        if node.id in others and node.id not in local:
            return StaticIssue(reasons.FORBIDDEN_CONSTRUCT,
                               f"`{node.id}` {where}: a kernel may read only module-level "
                               "constants (numbers, strings, tl.constexpr), not objects", line)
    return None


def root_name(node: ast.AST) -> str | None:
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None
