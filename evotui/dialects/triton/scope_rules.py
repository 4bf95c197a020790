"""Static rules on the names a candidate binds and reads. Part of
static_rules.check_source.

- **Dunders are not the candidate's to define.** Python calls them implicitly, and Triton's
  launch path (the op policy suspended) touches candidate objects in places no argument
  check covers: ``inspect.ismodule`` on a kernel module's globals reads ``__class__``, the
  autotuner hashes its ``key=`` entries, a dtype handed to ``triton.reinterpret`` is hashed
  and printed, a descriptor's flag is tested for truth. So no name of the form ``__x__`` is
  bound anywhere — by ``def``, assignment, a loop, ``with``, walrus or import target — except
  the few an honest file needs (``__init__``, ``__post_init__``, ``__call__``, ``__slots__``,
  ``__all__``, ``__doc__``, ``__version__``). ``for __eq__ in (f,)`` in a class body
  defined ``__eq__`` past a rule that looked at ``def`` names and assignments only.
- **A global is what the module binds.** A name a function reads from the module scope must
  be bound at module level (or be a builtin): Triton's interpreter copies its own globals
  (``np``, ``inspect``, ``time``) into the module of every kernel it runs, and a file that
  bound ``np`` only as a parameter of a function nobody calls read numpy by bare name after
  the first launch (``inspect`` ran a shell). Scopes are Python's own (``symtable``).
- No identifier mentions ``evotui`` (the harness's marks, ``_evotui_watched``).
"""

from __future__ import annotations

import ast
import builtins
import copy
import functools
import symtable

from evotui.core import reasons
from evotui.dialects.base import StaticIssue

ALLOWED_BOUND_DUNDERS = frozenset({"__init__", "__post_init__", "__call__", "__slots__",
                                   "__all__", "__doc__", "__version__"})
# dunder names a candidate may read by bare name (`__class__` is the class, in a method)
ALLOWED_READ_DUNDERS = frozenset({"__name__", "__doc__", "__debug__", "__class__",
                                  "__all__", "__version__"})
BUILTIN_NAMES = frozenset(dir(builtins))


def _is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


def bindings(tree: ast.AST) -> list[tuple[str, int]]:
    """Every name the tree binds, by any means, with its line."""
    out: list[tuple[str, int]] = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store | ast.Del):
            out.append((n.id, n.lineno))
        elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.append((n.name, n.lineno))
        elif isinstance(n, ast.arg):
            out.append((n.arg, n.lineno))
        elif isinstance(n, ast.alias):
            out.append(((n.asname or n.name).split(".")[0], getattr(n, "lineno", 0)))
        elif isinstance(n, ast.ExceptHandler) and n.name:
            out.append((n.name, n.lineno))
        elif isinstance(n, ast.MatchAs | ast.MatchStar) and n.name:
            out.append((n.name, n.lineno))
    return out


def bound_names(tree: ast.AST) -> set[str]:
    return {name for name, _ in bindings(tree)}


def check_names(tree: ast.Module) -> StaticIssue | None:
    for name, line in bindings(tree):
        if _is_dunder(name) and name not in ALLOWED_BOUND_DUNDERS:
            return StaticIssue(reasons.FORBIDDEN_CONSTRUCT,
                               f"binds `{name}` (Python and Triton call such methods "
                               "implicitly, where the checks cannot watch them: describe a "
                               "module with `extra_repr`, compare and hash configs with "
                               "`@dataclass(frozen=True)`)", line)
        if "evotui" in name.lower():
            return StaticIssue(reasons.FORBIDDEN_CONSTRUCT, f"binds `{name}` (the harness's "
                               "names are not the candidate's)", line)
    for n in ast.walk(tree):
        if (isinstance(n, ast.Assign | ast.AnnAssign) and any(
                isinstance(t, ast.Name) and t.id == "__doc__"
                for t in (n.targets if isinstance(n, ast.Assign) else [n.target]))
                and not (isinstance(n.value, ast.Constant) and isinstance(n.value.value, str))):
            # `__doc__ = property(f)`: read by functools.wraps where nothing watched
            return StaticIssue(reasons.FORBIDDEN_CONSTRUCT, "`__doc__` bound to something "
                               "other than a string", n.lineno)
        if (isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and _is_dunder(n.id)
                and n.id not in ALLOWED_READ_DUNDERS):
            return StaticIssue(reasons.FORBIDDEN_ATTRIBUTE, f"use of `{n.id}`", n.lineno)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and "_evotui" in n.value:
            return StaticIssue(reasons.FORBIDDEN_CONSTRUCT, "a string naming the harness's "
                               "attributes", n.lineno)
    return check_globals(tree)


def check_globals(tree: ast.Module) -> StaticIssue | None:
    """Every name read from the module scope is bound there, or a builtin the file does not
    rebind elsewhere. Annotations are left out (never evaluated with `from __future__ import
    annotations`; their strings are checked by static_rules)."""
    try:
        table = symtable.symtable(ast.unparse(_without_annotations(tree)), "candidate", "exec")
    except SyntaxError:  # pragma: no cover - the tree came from ast.parse
        return None
    module_bound = {s.get_name() for s in table.get_symbols()
                    if s.is_assigned() or s.is_imported() or s.is_parameter()
                    or s.is_namespace()}
    # a name the interpreter would put into the module must be bound there for certain: not
    # only in a branch that may not run (`if False: np = 1`), nor deleted (`np = 1; del np`)
    injected = interpreter_globals()
    module_bound -= injected - _surely_bound(tree)
    issue = _read_before_bound(tree, injected)
    if issue:
        return issue
    pending = [table]
    while pending:
        scope = pending.pop()
        pending.extend(scope.get_children())
        for sym in scope.get_symbols():
            if not sym.is_referenced():
                continue
            name = sym.get_name()
            at_module = scope.get_type() == "module"
            reads_global = sym.is_global() or (at_module and not (
                sym.is_assigned() or sym.is_imported()))
            if scope.get_type() == "class" and not sym.is_free() and (
                    not (sym.is_assigned() or sym.is_imported()) or name in injected):
                # a class body reads what it does not bind from globals — and a name it does
                # bind, before that line (`lib = np; np = None`)
                reads_global = True
            if not reads_global or name in module_bound or name in BUILTIN_NAMES:
                continue
            return StaticIssue(reasons.FORBIDDEN_CONSTRUCT,
                               f"`{name}` is read as a global but the file never binds it at "
                               "module level (a name something else put into the module, such "
                               "as the Triton interpreter's `np`)", _first_read(tree, name))
    return None


def _read_before_bound(tree: ast.Module, injected: frozenset[str]) -> StaticIssue | None:
    """At module level, a name the interpreter would put into the module read before the
    file binds it (a kernel launched at import, then `lib = np`)."""
    bound: set[str] = set()
    for stmt in tree.body:
        for node in _module_level_nodes(stmt):
            if (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
                    and node.id in injected and node.id not in bound
                    and node.id not in BUILTIN_NAMES):
                return StaticIssue(reasons.FORBIDDEN_CONSTRUCT,
                                   f"`{node.id}` is read at module level before the file binds "
                                   "it (a name Triton's interpreter puts into the module)",
                                   node.lineno)
        bound |= _surely_bound(ast.Module(body=[stmt], type_ignores=[]))
    return None


def _module_level_nodes(stmt: ast.stmt) -> list[ast.AST]:
    """What runs when the statement runs: not the bodies of functions and lambdas."""
    out: list[ast.AST] = []
    pending: list[ast.AST] = [stmt]
    while pending:
        node = pending.pop()
        out.append(node)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            pending.extend([*node.decorator_list, *node.args.defaults,
                            *(d for d in node.args.kw_defaults if d)])
        elif isinstance(node, ast.Lambda):
            pending.extend([*node.args.defaults, *(d for d in node.args.kw_defaults if d)])
        else:
            pending.extend(ast.iter_child_nodes(node))
    return out


@functools.cache
def interpreter_globals() -> frozenset[str]:
    """What Triton's CPU interpreter copies into the module of every kernel it runs (its
    own globals, where the module lacks them: `FunctionRewriter._compile_and_exec`)."""
    try:
        from triton.runtime import interpreter
    except ImportError:  # pragma: no cover - a triton without the interpreter
        return frozenset()
    return frozenset(vars(interpreter))


def _surely_bound(tree: ast.Module) -> set[str]:
    """Names the module's own top-level statements bind whenever it runs, never deleted."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    deleted = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Del)}
    return names - deleted


def _first_read(tree: ast.Module, name: str) -> int:
    lines = [n.lineno for n in ast.walk(tree)
             if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
    return min(lines, default=0)


def _without_annotations(tree: ast.Module) -> ast.Module:
    tree = copy.deepcopy(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.arg):
            node.annotation = None
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            node.returns = None
    return _AnnAssignToAssign().visit(tree)


class _AnnAssignToAssign(ast.NodeTransformer):
    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.stmt:
        if node.value is None:
            return ast.copy_location(ast.Pass(), node)
        return ast.copy_location(ast.Assign(targets=[node.target], value=node.value), node)
