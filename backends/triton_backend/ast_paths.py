"""Which module a name in a candidate's source refers to, shared by the static rules
(`static_rules`, `jit_rules`, `kernel_rules`)."""

from __future__ import annotations

import ast


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
