"""Which modules a candidate can reach from the allowed imports, found by looking at what is
loaded in this process (the parent: no candidate code runs here). A fixed list misses what
the next torch or Triton imports: `enum.bltns` is builtins, `tl.extra.modules` is
`sys.modules`.
"""

from __future__ import annotations

import ast
import functools
import sys
import types
import warnings

from evotui.core import reasons
from evotui.dialects.base import StaticIssue
from evotui.dialects.triton.ast_paths import dotted, resolve

# modules a candidate may hold as a value (`libdevice = tl.extra.cuda.libdevice`): Triton's
# language and math. Any other module as a value (`T = torch`, `[torch][0]`, a default, a
# return) makes a chain the path rules never see: `T.package.sys_importer`.
MODULE_VALUES_ALLOWED = ("triton.language", "math")


def check_module_values(tree: ast.Module, aliases: dict[str, str],
                        inner: set[int]) -> StaticIssue | None:
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    asked = _hasattr_subjects(tree)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Name) and node.id == "type" and isinstance(node.ctx, ast.Load)
                and id(node) not in called):
            # `T = type; T("C", (int,), {...})`: only `type(x)` itself is checked
            return StaticIssue(reasons.FORBIDDEN_CONSTRUCT, "`type` used other than called",
                               node.lineno)
        if (not isinstance(node, ast.Name | ast.Attribute) or id(node) in inner
                or not isinstance(node.ctx, ast.Load) or id(node) in asked):
            continue
        path = dotted(node, aliases)
        if path is None or path == "__future__":
            continue
        real = module_name(path)
        if real is not None and not (real.startswith(MODULE_VALUES_ALLOWED)
                                     and not private_module(real)):
            return StaticIssue(reasons.FORBIDDEN_CONSTRUCT,
                               f"`{ast.unparse(node)}` is a module used as a value (held, passed "
                               "or returned, its attributes escape the rules): use it as "
                               f"`{ast.unparse(node)}.name`", getattr(node, "lineno", 0))
    return None


def _hasattr_subjects(tree: ast.Module) -> set[int]:
    """`hasattr(torch, "xpu")`: a module asked whether it has a name, which answers a bool
    (portable code asks before it touches another backend's device module). The ids of
    those first arguments, where the file does not bind `hasattr` itself."""
    rebound = any(isinstance(n, ast.Name) and n.id == "hasattr" and not isinstance(n.ctx, ast.Load)
                  or isinstance(n, ast.FunctionDef | ast.ClassDef) and n.name == "hasattr"
                  or isinstance(n, ast.alias) and (n.asname or n.name) == "hasattr"
                  or isinstance(n, ast.arg) and n.arg == "hasattr" for n in ast.walk(tree))
    if rebound:
        return set()
    return {id(n.args[0]) for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "hasattr"
            and len(n.args) == 2 and not n.keywords and isinstance(n.args[1], ast.Constant)
            and isinstance(n.args[1].value, str)}


@functools.lru_cache(maxsize=4096)
def module_name(path: str) -> str | None:
    """The real name of the module a dotted name of an allowed import resolves to (in this
    process: the parent, where no candidate code runs), or None for anything else.
    (`tl.core.ir` is `triton._C.libtriton.ir`.)"""
    value = resolve(path)
    return value.__name__ if isinstance(value, types.ModuleType) else None


def private_module(name: str) -> bool:
    return any(part.startswith("_") for part in name.split("."))


def hidden_module_on(path: str) -> str | None:
    """A module on the chain whose real name is private (`triton.language.core.ir` →
    `triton._C.libtriton.ir`, whose `parse_mlir_module` reads files): the path rules judge
    names, and a public name can hold a private module."""
    parts = path.split(".")
    for end in range(2, len(parts) + 1):
        name = module_name(".".join(parts[:end]))
        if name is not None and private_module(name):
            return name
    return None


@functools.cache
def reachable_modules(allowed_imports: frozenset[str]) -> frozenset[str]:
    """Attribute names under which a loaded torch, triton or allowed stdlib module holds a
    module from elsewhere (`enum.bltns` is builtins, `torch.glob`, `typing.types`): found by
    walking them, since a fixed list misses what the next version imports."""
    import importlib

    roots = {name.split(".")[0] for name in allowed_imports} - {"__future__"}
    found, ours, escapes = set(), set(), set()
    with warnings.catch_warnings():  # deprecated torch names warn when touched
        warnings.simplefilter("ignore")
        for name in allowed_imports - {"__future__"}:
            try:
                importlib.import_module(name)
            except ImportError:  # pragma: no cover - an optional part missing
                continue
        for mod_name, module in list(sys.modules.items()):
            if module is None or mod_name.split(".")[0] not in roots:
                continue
            held_as_value = mod_name.startswith(MODULE_VALUES_ALLOWED) and not private_module(mod_name)
            for attr, value in list(vars(module).items()):
                if isinstance(value, types.ModuleType):
                    if held_as_value and (private_module(value.__name__) or not
                                          value.__name__.startswith(MODULE_VALUES_ALLOWED)):
                        # a module a candidate may hold as a value (`C = tl.core`) holding
                        # one no path rule sees (`C.ir` is triton._C's)
                        escapes.add(attr)
                    # `tl.random`, `tl.math` name triton's own modules: those stay usable
                    (ours if value.__name__.split(".")[0] in roots else found).add(attr)
                elif _leads_to_modules(value):
                    escapes.add(attr)  # even where torch names a module of its own so
    return frozenset(found - ours) | frozenset(escapes)


IMPORT_MACHINERY = ("importlib", "_frozen_importlib", "zipimport", "pkgutil")


def _leads_to_modules(value: object) -> bool:
    """A dict of modules (`tl.extra.modules` is `sys.modules`, left there by
    `from sys import modules`) or a piece of the import machinery (a spec, a loader, a
    finder, `module_from_spec`): any module one step away."""
    if isinstance(value, dict):
        try:
            return any(isinstance(v, types.ModuleType) for v in list(value.values())[:4096])
        except Exception:  # noqa: BLE001 - a dict-like that will not list its values
            return False
    owner = getattr(value, "__module__", None) if callable(value) else type(value).__module__
    return isinstance(owner, str) and owner.startswith(IMPORT_MACHINERY)
