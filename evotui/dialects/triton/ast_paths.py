"""Which module a name in a candidate's source refers to, shared by the static rules
(`static_rules`, `jit_rules`, `kernel_rules`)."""

from __future__ import annotations

import ast
import importlib


def module_aliases(tree: ast.Module) -> dict[str, str]:
    """Local name → module path, for every import (``tl`` → ``triton.language``)."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    names[a.asname] = a.name
                else:
                    root = a.name.split(".")[0]
                    names[root] = root
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                names[a.asname or a.name] = f"{node.module}.{a.name}"
    return names


def dotted(node: ast.AST, aliases: dict[str, str]) -> str | None:
    """``tl.extra.cuda`` → ``triton.language.extra.cuda`` when the chain starts at a module."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name) and node.id in aliases:
        return ".".join([aliases[node.id], *reversed(parts)])
    return None


def resolve(path: str) -> object | None:
    """The object a dotted name of an importable module refers to (importing submodules as
    Python would), or None when it does not resolve."""
    parts = path.split(".")
    try:
        obj: object = importlib.import_module(parts[0])
        for i, part in enumerate(parts[1:], start=1):
            if hasattr(obj, part):
                obj = getattr(obj, part)
            else:
                obj = importlib.import_module(".".join(parts[: i + 1]))
    except Exception:  # noqa: BLE001 - a name that does not resolve
        return None
    return obj


def without_main_block(tree: ast.Module) -> ast.Module:
    """The file without its top-level ``if __name__ == "__main__":`` self-test, which never
    runs (the worker loads the file under another module name, and executes this same tree),
    and with empty bodies for the functions only that self-test calls (``_self_test_helpers``)
    — unless the file binds ``__name__`` itself, when the block stays and is checked like
    the rest."""
    binds_name = any(
        (isinstance(n, ast.Name) and n.id == "__name__" and not isinstance(n.ctx, ast.Load))
        or (isinstance(n, ast.arg) and n.arg == "__name__")
        or (isinstance(n, ast.alias) and (n.asname or n.name) == "__name__")
        or (isinstance(n, ast.Global | ast.Nonlocal) and "__name__" in n.names)
        for n in ast.walk(tree))
    if binds_name:
        return tree
    body = [n for n in tree.body if not _is_main_block(n)]
    main = [n for n in tree.body if _is_main_block(n)]
    helpers = _self_test_helpers(tree, body, main)
    body = [_blanked(n) if isinstance(n, ast.FunctionDef) and n.name in helpers else n
            for n in body]
    return ast.Module(body=body, type_ignores=tree.type_ignores)


def _loads(nodes: list[ast.AST]) -> set[str]:
    return {n.id for node in nodes for n in ast.walk(node)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _self_test_helpers(tree: ast.Module, body: list[ast.stmt], main: list[ast.stmt]) -> set[str]:
    """Top-level functions only the `__main__` self-test calls (`def run_tests(): torch.
    manual_seed(0) ...`, a benchmark): no line that runs in the harness names them, so their
    bodies never run there — the file is judged, and run, with those bodies empty. Each is a
    def without decorators whose name nothing else binds, named only by the `__main__` block
    or by another such helper's body."""
    bound: dict[str, int] = {}
    for n in ast.walk(tree):
        name = (n.id if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
                else n.name if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                else (n.asname or n.name).split(".")[0] if isinstance(n, ast.alias)
                else n.arg if isinstance(n, ast.arg) else None)
        if name is not None:
            bound[name] = bound.get(name, 0) + 1
    defs = {n.name: n for n in body if isinstance(n, ast.FunctionDef) and not n.decorator_list
            and bound.get(n.name) == 1}
    helpers = set(defs)
    while True:
        # what the rest of the file names: every statement but the helpers' bodies (their
        # defaults and annotations are evaluated where they are defined)
        outside = _loads([n for n in body if not (isinstance(n, ast.FunctionDef)
                                                  and n.name in helpers)])
        outside |= _loads([part for name in helpers for part in
                           [*defs[name].args.defaults, *filter(None, defs[name].args.kw_defaults),
                            *(a.annotation for a in ast.walk(defs[name].args)
                              if isinstance(a, ast.arg) and a.annotation is not None),
                            *filter(None, [defs[name].returns])]])
        kept = {name for name in helpers if name not in outside}
        if kept == helpers:
            break
        helpers = kept
    reached, pending = set(), list(_loads(main) & helpers)
    while pending:
        name = pending.pop()
        if name not in reached:
            reached.add(name)
            pending.extend(_loads(defs[name].body) & helpers)
    return reached


def _blanked(fn: ast.FunctionDef) -> ast.FunctionDef:
    return ast.FunctionDef(name=fn.name, args=fn.args, body=[ast.copy_location(ast.Pass(), fn)],
                           decorator_list=[], returns=fn.returns, type_comment=None,
                           **({"type_params": []} if hasattr(fn, "type_params") else {}),
                           lineno=fn.lineno, col_offset=fn.col_offset,
                           end_lineno=fn.end_lineno, end_col_offset=fn.end_col_offset)


def _is_main_block(node: ast.stmt) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name)
            and test.left.id == "__name__" and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Eq) and len(test.comparators) == 1
            and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == "__main__" and not node.orelse)
