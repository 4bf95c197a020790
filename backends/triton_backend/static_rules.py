"""Static rules for Triton candidates, checked on the AST before any candidate code runs.

The rules are an allowlist where one is practical (imports) and a denylist of the known
cheat vectors elsewhere: threads and processes, streams, introspection, patching of torch
or the harness, tensor subclasses, exception-swallowing fallbacks.
"""

from __future__ import annotations

import ast

from backends.base import StaticIssue
from evotui.eval import reasons

ALLOWED_IMPORTS = {
    "torch",
    "torch.nn",
    "torch.nn.functional",
    "triton",
    "triton.language",
    "triton.language.math",
    "triton.language.extra",
    "triton.language.extra.libdevice",
    "triton.language.extra.cuda",
    "triton.language.extra.cuda.libdevice",
    "math",
    "typing",
    "functools",
    "itertools",
    "operator",
    "dataclasses",
    "__future__",
}

FORBIDDEN_CALLS = {
    "eval", "exec", "compile", "__import__", "getattr", "setattr", "delattr", "globals",
    "locals", "vars", "open", "input", "breakpoint", "memoryview", "exit", "quit",
}

# Attribute names that only a cheat needs in a Triton candidate.
FORBIDDEN_ATTRIBUTES = {
    "Stream", "stream", "Event", "synchronize", "set_stream", "current_stream",
    "default_stream", "CUDAGraph", "graph", "graphs", "data_ptr", "untyped_storage",
    "storage", "set_", "register_forward_hook", "register_forward_pre_hook",
    "manual_seed", "seed", "set_rng_state", "get_rng_state", "testing", "do_bench",
    "compile", "jit_compile", "library", "ops", "autograd", "utils", "backends",
    "multiprocessing", "distributed", "cuda", "hub", "save", "from_file", "runtime", "driver",
    "accelerator", "get_device_module", "cudart", "profiler", "jit_stream",
}

ALLOWED_DUNDERS = {"__init__", "__name__", "__future__"}


def check_source(source: str, filename: str = "candidate.py") -> StaticIssue | None:
    """Return the first rule the candidate breaks, or None when it passes."""
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as e:
        return StaticIssue(reasons.SYNTAX_ERROR, f"line {e.lineno}: {e.msg}", e.lineno or 0)
    module_aliases = _module_aliases(tree)
    for node in ast.walk(tree):
        issue = _check_node(node, module_aliases)
        if issue:
            return issue
    if not any(isinstance(n, ast.ClassDef) and n.name == "ModelNew" for n in tree.body):
        return StaticIssue(reasons.BAD_INTERFACE, "no top-level `class ModelNew`", 0)
    return None


def _module_aliases(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            names.update(a.asname or a.name for a in node.names)
    return names


def _check_node(node: ast.AST, module_aliases: set[str]) -> StaticIssue | None:
    line = getattr(node, "lineno", 0)
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.name not in ALLOWED_IMPORTS:
                return StaticIssue(reasons.FORBIDDEN_IMPORT, f"import of `{alias.name}`", line)
    elif isinstance(node, ast.ImportFrom):
        mod = node.module or ""
        if node.level or mod not in ALLOWED_IMPORTS:
            return StaticIssue(reasons.FORBIDDEN_IMPORT, f"import from `{mod or '.'}`", line)
        for alias in node.names:
            full = f"{mod}.{alias.name}"
            if alias.name == "*":
                return StaticIssue(reasons.FORBIDDEN_IMPORT, f"`from {mod} import *`", line)
            if full in {"torch.cuda", "torch.utils", "torch.library", "torch.ops"}:
                return StaticIssue(reasons.FORBIDDEN_IMPORT, f"import of `{full}`", line)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        if node.func.id in FORBIDDEN_CALLS:
            return StaticIssue(reasons.FORBIDDEN_CALL, f"call to `{node.func.id}()`", line)
    elif isinstance(node, ast.Name) and node.id in {"__builtins__", "__loader__", "__spec__"}:
        return StaticIssue(reasons.FORBIDDEN_ATTRIBUTE, f"use of `{node.id}`", line)
    elif isinstance(node, ast.Name) and node.id in FORBIDDEN_CALLS and isinstance(node.ctx, ast.Load):
        return StaticIssue(reasons.FORBIDDEN_CALL, f"reference to `{node.id}`", line)
    elif isinstance(node, ast.Attribute):
        attr = node.attr
        if attr.startswith("_") and attr not in ALLOWED_DUNDERS:
            return StaticIssue(reasons.FORBIDDEN_ATTRIBUTE, f"private attribute `.{attr}`", line)
        if attr in FORBIDDEN_ATTRIBUTES:
            return StaticIssue(reasons.FORBIDDEN_ATTRIBUTE, f"attribute `.{attr}`", line)
    elif isinstance(node, ast.Try | ast.TryStar):
        return StaticIssue(reasons.FORBIDDEN_CONSTRUCT,
                           "try/except (a silent fallback hides failures)", line)
    elif isinstance(node, ast.Global | ast.Nonlocal):
        return StaticIssue(reasons.FORBIDDEN_CONSTRUCT, "global/nonlocal state", line)
    elif isinstance(node, ast.ClassDef):
        for base in node.bases:
            text = ast.unparse(base)
            if text in {"torch.Tensor", "Tensor"} or text.endswith(".Tensor"):
                return StaticIssue(reasons.FORBIDDEN_CONSTRUCT, "a torch.Tensor subclass", line)
    elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        if node.name in {"__torch_function__", "__torch_dispatch__", "__del__", "__eq__",
                         "__getattr__", "__getattribute__"}:
            return StaticIssue(reasons.FORBIDDEN_CONSTRUCT, f"defines `{node.name}`", line)
        if isinstance(node, ast.AsyncFunctionDef):
            return StaticIssue(reasons.FORBIDDEN_CONSTRUCT, "async code", line)
    elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Delete):
        targets = node.targets if isinstance(node, ast.Assign | ast.Delete) else [node.target]
        for target in targets:
            root = _attribute_root(target)
            if root is not None and root in module_aliases:
                return StaticIssue(reasons.FORBIDDEN_CONSTRUCT,
                                   f"assigns into module `{root}` (patching)", line)
    return None


def _attribute_root(target: ast.AST) -> str | None:
    """For ``a.b.c = ...`` or ``a.b[0] = ...`` return ``a``; None for plain names."""
    node = target
    seen_attr = False
    while isinstance(node, ast.Attribute | ast.Subscript):
        seen_attr = True
        node = node.value
    if seen_attr and isinstance(node, ast.Name):
        return node.id
    return None
