"""Static rules on what becomes a Triton kernel, and on names no line of the file binds
Part of static_rules.check_source.

Under the CPU interpreter a kernel is the Python source of the function that ``triton.jit``
wrapped, run with the op policy suspended; the kernel rules (kernel_rules) check the bodies
of the file's ``@triton.jit`` defs. So what is jitted must be exactly those defs:

- ``triton.jit`` / ``autotune`` / ``heuristics`` only as decorators, or called at the top
  level as ``name = triton.jit(fn)`` (``triton.autotune(...)(triton.jit(fn))``) on a
  top-level def without decorators, whose body is then checked as a kernel; a
  ``@triton.jit`` def's decorators only these, ``jit`` innermost (``triton.jit(body)`` on
  another object, ``J = triton.jit``, ``@triton.jit @swap`` jitted a function nobody checked);
- a kernel parameter's default is a constant (``S: tl.constexpr = STATE``: the body got an
  object whose methods it called);
- a kernel reads only names the file binds at top level, its own, triton's and builtins
  (``if True: STATE = {}`` hid an object from the kernel rules);
- a ``tl.…`` name a kernel uses exists in triton (``self.lang = tl; self.lang.f = f``);
- every name the file reads is bound in the file or a builtin: Triton's interpreter copies
  its own globals (``np``, ``inspect``, ``time``) into the module of every kernel it runs.

That Triton compiles these defs' own text, not other text it found (a string in the body
holding another ``def``, a file read in another encoding), is the launch hooks' check
(``kernel_defs.kernel_texts``, ``LaunchRecorder.confirm_text``), not a rule on lines.
"""

from __future__ import annotations

import ast
import builtins

from evotui.core import reasons
from evotui.dialects.base import StaticIssue
from evotui.dialects.triton.ast_paths import dotted, resolve
from evotui.dialects.triton.kernel_defs import decorator_path, jit_defs, kernel_assignments
from evotui.dialects.triton.kernel_rules import constant_expression, module_constants
from evotui.dialects.triton.receiver_rules import ctx_fields
from evotui.dialects.triton.scope_rules import bound_names

TRITON_DECORATORS = {"triton.jit", "triton.autotune", "triton.heuristics"}
BUILTIN_NAMES = frozenset(dir(builtins))


def check_jit_rules(tree: ast.Module, aliases: dict[str, str]) -> StaticIssue | None:
    return (_check_decorators(tree, aliases) or _check_kernels(tree, aliases)
            or _check_deep_assignments(tree, aliases))


def _check_deep_assignments(tree: ast.Module, aliases: dict[str, str]) -> StaticIssue | None:
    """``self.a.b = v`` (no deeper) only where every ``self.a = ...`` builds an nn module or an
    object of the file's own classes (``self.ln = nn.LayerNorm(...)``; ``self.ln.weight = ...``): through
    ``self.k = kernel``, ``self.K = type(kernel)`` or ``self.lang = tl`` it patched Triton."""
    own_classes = {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    own = ctx_fields(tree, aliases)
    builds: set[int] = set()  # `self.a = nn.X(...)` / `self.a = OwnClass(...)` targets
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign | ast.AnnAssign) and isinstance(node.value, ast.Call):
            func = node.value.func
            if ((dotted(func, aliases) or "").startswith("torch.nn.")
                    or isinstance(func, ast.Name) and func.id in own_classes):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                builds.update(id(t) for t in targets)
    built: dict[str, bool] = {}
    for leaf in ast.walk(tree):  # every binding of `self.a`: assignments, loops, `with`, ...
        if (isinstance(leaf, ast.Attribute) and isinstance(leaf.value, ast.Name)
                and leaf.value.id == "self" and isinstance(leaf.ctx, ast.Store | ast.Del)):
            built[leaf.attr] = built.get(leaf.attr, True) and id(leaf) in builds
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign | ast.Delete):
            continue
        targets = node.targets if isinstance(node, ast.Assign | ast.Delete) else [node.target]
        for t in targets:
            for leaf in ast.walk(t):
                if not (isinstance(leaf, ast.Attribute) and isinstance(leaf.ctx, ast.Store | ast.Del)):
                    continue
                holder = leaf.value
                if isinstance(holder, ast.Name) and holder.id == "self" or id(leaf) in own:
                    continue  # self.x = ..., ctx.x = ... (an autograd Function's context)
                if not (isinstance(holder, ast.Attribute) and isinstance(holder.value, ast.Name)
                        and holder.value.id == "self" and built.get(holder.attr, False)):
                    return StaticIssue(reasons.FORBIDDEN_CONSTRUCT,
                                       f"assigns to `{ast.unparse(leaf)}`: through `self` only "
                                       "into nn modules and objects of the file's own classes "
                                       "that `self` built (not into a kernel, a class or a module "
                                       "stored there)", node.lineno)
    return None


def _check_decorators(tree: ast.Module, aliases: dict[str, str]) -> StaticIssue | None:
    as_decorator: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        paths = [decorator_path(d, aliases) for d in node.decorator_list]
        if not any(p in TRITON_DECORATORS for p in paths):
            continue
        first = node.decorator_list[0]
        if isinstance(first, ast.Name) and first.id == "staticmethod" and len(paths) > 1:
            paths = paths[1:]  # a kernel kept in a class body
        if isinstance(node, ast.ClassDef) or paths[-1] != "triton.jit" or not all(
                p in TRITON_DECORATORS for p in paths):
            return StaticIssue(reasons.FORBIDDEN_CONSTRUCT,
                               f"`{node.name}`: a kernel's decorators are triton.autotune, "
                               "triton.heuristics and, innermost, triton.jit — nothing else "
                               "(another decorator could hand Triton a function the kernel "
                               "rules never checked)", node.lineno)
        for d in node.decorator_list:
            as_decorator.add(id(d.func if isinstance(d, ast.Call) else d))
    for _, refs in kernel_assignments(tree, aliases).values():
        as_decorator |= refs
    for node in ast.walk(tree):
        if isinstance(node, ast.Name | ast.Attribute) and id(node) not in as_decorator:
            path = dotted(node, aliases)
            if path in TRITON_DECORATORS:
                return StaticIssue(reasons.FORBIDDEN_CONSTRUCT,
                                   f"`{ast.unparse(node)}` used other than as a decorator of a "
                                   "def or as `name = triton.jit(fn)` at the top level, `fn` a "
                                   "top-level def without decorators (anything else can make "
                                   "a kernel of a function the kernel rules never checked)",
                                   node.lineno)
    return None


def _literal(node: ast.expr | None, aliases: dict[str, str],
             constants: frozenset[str] = frozenset(), tree: ast.Module | None = None) -> bool:
    """A kernel parameter's default: a constant, a triton dtype, tl.constexpr(<constant>),
    or a module constant (``kernel_rules.module_constants``: bound once, to a constant)."""
    if node is None or isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Name):
        return node.id in constants
    if isinstance(node, ast.UnaryOp):
        return _literal(node.operand, aliases, constants, tree)
    if isinstance(node, ast.Attribute):
        return (dotted(node, aliases) or "").startswith("triton.language.")
    if isinstance(node, ast.Call) and not node.keywords and (
            dotted(node.func, aliases) or "").endswith(".constexpr") and (
            dotted(node.func, aliases) or "").startswith("triton.") and all(
            isinstance(a, ast.Constant) for a in node.args):
        return True
    # `2 ** 10`, `1 << 10`, `float("-inf")`: a number computed from constants
    return tree is not None and constant_expression(node, tree, aliases, constants)


def _top_level_names(tree: ast.Module) -> set[str]:
    """Names bound by the file's top-level statements themselves (not inside an `if`,
    a loop, a `with`, a walrus)."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
    # a name also bound some other way at module scope is not what the kernel rules judged
    for node in tree.body:
        if not isinstance(node, ast.Assign | ast.AnnAssign | ast.FunctionDef | ast.ClassDef
                          | ast.Import | ast.ImportFrom | ast.Expr):
            names -= bound_names(node)
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.Expr):
            names -= {n.target.id for n in ast.walk(node)
                      if isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name)}
    return names


def _check_kernels(tree: ast.Module, aliases: dict[str, str]) -> StaticIssue | None:
    top = _top_level_names(tree)
    kernels = jit_defs(tree, aliases)
    own = {k.name for k in kernels}
    shadowed = bound_names(tree)  # builtins the file rebinds are its own objects
    constants = module_constants(tree, aliases)
    for kernel in kernels:
        where = f"in the Triton kernel `{kernel.name}`"
        args = kernel.args
        for default in [*args.defaults, *args.kw_defaults]:
            if not _literal(default, aliases, constants, tree):
                return StaticIssue(reasons.FORBIDDEN_CONSTRUCT,
                                   f"the default `{ast.unparse(default)}` of a parameter of the "
                                   f"Triton kernel `{kernel.name}`: only constants (the body "
                                   "would get an object)", kernel.lineno)
        local = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
        if args.vararg:
            local.add(args.vararg.arg)
        if args.kwarg:
            local.add(args.kwarg.arg)
        for stmt in kernel.body:
            local |= bound_names(stmt)
        seen_chain: set[int] = set()
        for stmt in kernel.body:
            for node in ast.walk(stmt):
                if isinstance(node, ast.Attribute) and id(node) not in seen_chain:
                    inner = node.value
                    while isinstance(inner, ast.Attribute):
                        seen_chain.add(id(inner))
                        inner = inner.value
                    path = dotted(node, aliases)
                    if path and path.startswith("triton.") and resolve(path) is None:
                        return StaticIssue(reasons.FORBIDDEN_ATTRIBUTE,
                                           f"`{ast.unparse(node)}` {where}: triton has no such "
                                           "name (something put it there)", node.lineno)
                elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                    name = node.id
                    if name in local or name in own or name in aliases:
                        continue
                    if name in top or (name in BUILTIN_NAMES and name not in shadowed):
                        continue
                    return StaticIssue(reasons.FORBIDDEN_CONSTRUCT,
                                       f"`{name}` {where}: a kernel may read its parameters and "
                                       "locals, triton, builtins and names the file binds at top "
                                       "level (not inside an `if`, a loop, a `with`)", node.lineno)
    return None
