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
(``kernel_texts``, ``LaunchRecorder.confirm_text``), not a rule on lines.
"""

from __future__ import annotations

import ast
import builtins
import textwrap
from typing import NamedTuple

from evotui.core import reasons
from evotui.dialects.base import StaticIssue
from evotui.dialects.triton.ast_paths import dotted, module_aliases, resolve
from evotui.dialects.triton.receiver_rules import ctx_fields
from evotui.dialects.triton.scope_rules import bindings, bound_names
from evotui.dialects.triton.text_rules import python_lines

TRITON_DECORATORS = {"triton.jit", "triton.autotune", "triton.heuristics"}
BUILTIN_NAMES = frozenset(dir(builtins))


def _decorator_path(dec: ast.expr, aliases: dict[str, str]) -> str | None:
    return dotted(dec.func if isinstance(dec, ast.Call) else dec, aliases)


def jit_defs(tree: ast.Module, aliases: dict[str, str]) -> list[ast.FunctionDef]:
    """The defs decorated with ``triton.jit`` (however imported), and those a top-level
    ``kernel = triton.jit(fn)`` makes kernels of (``kernel_assignments``)."""
    decorated = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)
                 and any(_decorator_path(d, aliases) == "triton.jit" for d in n.decorator_list)]
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
        if (isinstance(func, ast.Call) and _decorator_path(func, aliases) in WRAPPERS
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
        paths = [_decorator_path(d, aliases) for d in node.decorator_list]
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
    from evotui.dialects.triton.kernel_rules import constant_expression  # (it imports us)

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
    from evotui.dialects.triton.kernel_rules import module_constants  # (it imports us)

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
