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
    runs (the worker loads the file under another module name, and executes this same tree)
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
    return ast.Module(body=body, type_ignores=tree.type_ignores)


def _is_main_block(node: ast.stmt) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name)
            and test.left.id == "__name__" and len(test.ops) == 1
            and isinstance(test.ops[0], ast.Eq) and len(test.comparators) == 1
            and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == "__main__" and not node.orelse)
