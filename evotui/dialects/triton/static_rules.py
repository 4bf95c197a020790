"""Static rules for Triton candidates, checked on the AST before any candidate code runs.

The operating system's sandbox keeps the machine safe (files, network, processes, secrets,
the next candidate: docs/threat-model.md). These rules keep the verdict true. A candidate
runs in the process that times it and writes its answer, so the rules stop what would change
what the timer and the judge see: patching torch, Triton or the harness; reaching the
harness's objects (frames, globals, private attributes, modules held as values); writing a
file descriptor (the answer's pipe: ``open``, ``os.write``, a log file); work the timer does
not see (streams, graphs, threads); the host computing the answer; code the rules never read
(``eval``, strings evaluated as annotations).

Imports are an allowlist. Dotted names that start at an imported module are resolved
(``tl.extra.cuda.libdevice.erf`` → ``triton.language.extra.cuda.libdevice.erf``) and checked
against the parts of torch and triton that only a cheat needs (streams, graphs, the
profiler, the compiler, testing, private modules). On other objects a short list of
attribute names is banned anywhere (``data_ptr``, ``Stream``, ``synchronize``, ...), and
private attributes are allowed only directly on ``self`` (``self._x``, not ``self.t._C``).
Modules that allowed modules import (``torch.os``, ``torch.inspect``) are banned by name, as
are host-side escapes (``.numpy()``, ``.tolist()``). No ``try`` (silent fallbacks), no
``global``, no Tensor or builtin-type subclasses, no assignment to attributes of anything but
``self`` (patching torch, triton or the harness).
"""

from __future__ import annotations

import ast

from evotui.core import reasons
from evotui.dialects.base import StaticIssue
from evotui.dialects.triton.annotation_rules import check_annotations
from evotui.dialects.triton.ast_paths import dotted, module_aliases, without_main_block
from evotui.dialects.triton.jit_rules import check_jit_rules
from evotui.dialects.triton.kernel_rules import check_kernel_bodies, root_name
from evotui.dialects.triton.module_reach import (
    check_module_values,
    reachable_modules,
)
from evotui.dialects.triton.path_rules import ALLOWED_MODULE_PATHS, forbidden_path
from evotui.dialects.triton.receiver_rules import (
    AUTOGRAD_FUNCTION,
    check_unbound_method_calls,
    ctx_fields,
    own_init,
    trusted_root,
    trusted_selves,
)
from evotui.dialects.triton.rule_names import (
    ALLOWED_BASE_NAMES,
    ALLOWED_BASE_PREFIXES,
    ALLOWED_DUNDERS,
    ALLOWED_IMPORTS,
    ALLOWED_PRIVATE,
    BUILTIN_TYPES,
    FORBIDDEN_ATTRIBUTE_PREFIXES,
    FORBIDDEN_ATTRIBUTE_SUFFIXES,
    FORBIDDEN_ATTRIBUTES,
    FORBIDDEN_BASES,
    FORBIDDEN_CALLS,
    FORBIDDEN_KEYWORDS,
    HARMLESS_MODULE_NAMES,
    MODULE_NAMES,
)
from evotui.dialects.triton.scope_rules import bindings, check_names
from evotui.dialects.triton.stdlib_rules import (
    DOTTED_MODULES,
    STDLIB_NAMES,
    WRAPS_DECORATOR,
    check_environment,
    check_wraps,
    stdlib_member,
)
from evotui.dialects.triton.text_rules import check_text, without_bom


def check_source(source: str, filename: str = "candidate.py") -> StaticIssue | None:
    """Return the first rule the candidate breaks, or None when it passes."""
    issue = check_text(source)  # one text for every reader, before anything reads it
    if issue:
        return issue
    source = without_bom(source)  # as the worker compiles and pins it
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as e:
        return StaticIssue(reasons.SYNTAX_ERROR, f"line {e.lineno}: {e.msg}", e.lineno or 0)
    except ValueError as e:  # a NUL character (Python 3.11)
        return StaticIssue(reasons.SYNTAX_ERROR, str(e), 0)
    tree = without_main_block(tree)
    aliases = module_aliases(tree)
    own_classes = {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    issue = (check_annotations(tree) or check_names(tree) or check_wraps(tree, aliases)
             or check_environment(tree, aliases))
    if issue:
        return issue
    # inner links of a dotted chain (`torch.cuda` in `torch.cuda.current_device`) are judged
    # as part of the whole chain
    inner = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    named_reads = _getattr_by_constant(tree, aliases)
    own_fields = ctx_fields(tree, aliases)
    trusted = trusted_selves(tree)
    issue = check_unbound_method_calls(tree, trusted)
    if issue:
        return issue
    for node in ast.walk(tree):
        if id(node) in named_reads:
            continue  # `getattr(self.linear, "bias", None)`: judged as `self.linear.bias`
        issue = _check_node(node, aliases, inner, own_classes, own_fields, trusted)
        if issue:
            return issue
    issue = check_module_values(tree, aliases, inner)
    if issue:
        return issue
    issue = check_kernel_bodies(tree, aliases)
    if issue:
        return issue
    issue = check_jit_rules(tree, aliases)
    if issue:
        return issue
    if not any(isinstance(n, ast.ClassDef) and n.name == "ModelNew" for n in tree.body):
        return StaticIssue(reasons.BAD_INTERFACE, "no top-level `class ModelNew`", 0)
    return None


def _enum_mixin(node: ast.ClassDef, aliases: dict[str, str]) -> bool:
    return any((dotted(b, aliases) if isinstance(b, ast.Attribute) else aliases.get(ast.unparse(b))
                or "").startswith("enum.") for b in node.bases)


def _allowed_base(base: ast.expr, aliases: dict[str, str], own_classes: set[str]) -> bool:
    text = ast.unparse(base)
    if text in own_classes or text in ALLOWED_BASE_NAMES:
        return True
    if isinstance(base, ast.Subscript):  # Generic[T], NamedTuple[...]
        return _allowed_base(base.value, aliases, own_classes)
    path = dotted(base, aliases) if isinstance(base, ast.Attribute) else aliases.get(text)
    if path is None:
        return False
    return (path.startswith(ALLOWED_BASE_PREFIXES) and not path.startswith(FORBIDDEN_BASES)
            or path == AUTOGRAD_FUNCTION)


def _check_node(node: ast.AST, aliases: dict[str, str], inner: set[int],
                own_classes: set[str], ctx_fields: frozenset[int] = frozenset(),
                trusted: frozenset[int] | None = None) -> StaticIssue | None:
    line = getattr(node, "lineno", 0)
    if isinstance(node, ast.Import):
        for a in node.names:
            if a.name not in ALLOWED_IMPORTS:
                return StaticIssue(reasons.FORBIDDEN_IMPORT, f"import of `{a.name}`", line)
    elif isinstance(node, ast.ImportFrom):
        mod = node.module or ""
        if node.level or mod not in ALLOWED_IMPORTS:
            return StaticIssue(reasons.FORBIDDEN_IMPORT, f"import from `{mod or '.'}`", line)
        for a in node.names:
            full = f"{mod}.{a.name}"
            if a.name == "*":
                return StaticIssue(reasons.FORBIDDEN_IMPORT, f"`from {mod} import *`", line)
            if full == WRAPS_DECORATOR:
                continue  # where `wraps` is used is check_wraps's to judge
            if a.name in FORBIDDEN_ATTRIBUTES or a.name in MODULE_NAMES \
                    or a.name.endswith(FORBIDDEN_ATTRIBUTE_SUFFIXES):
                return StaticIssue(reasons.FORBIDDEN_IMPORT, f"import of `{full}`", line)
            if full not in ALLOWED_IMPORTS and forbidden_path(full) and full != "triton.runtime.driver":
                # `from triton.runtime import driver` is how the tutorials size their grids
                return StaticIssue(reasons.FORBIDDEN_IMPORT, f"import of `{full}`", line)
            if full not in ALLOWED_IMPORTS and _imported_name_issue(full, line):
                # `from triton.language.extra import modules` is `tl.extra.modules`
                # (`sys.modules`): the name rules apply as they do to the attribute
                return StaticIssue(reasons.FORBIDDEN_IMPORT, f"import of `{full}` "
                                   f"({_imported_name_issue(full, line).message})", line)
    elif isinstance(node, ast.Call) and FORBIDDEN_KEYWORDS & set(_keyword_names(node)):
        keyword = next(k for k in _keyword_names(node) if k in FORBIDDEN_KEYWORDS)
        why = {"do_bench": "runs a function the tuner calls unwatched",
               "eval_str": "evaluates annotations as code",
               "filename": "writes a file, which can be the worker's answer"}.get(keyword,
                                                                "names a module to write into")
        return StaticIssue(reasons.FORBIDDEN_CALL, f"a `{keyword}=` argument (it {why})", line)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        if node.func.id in FORBIDDEN_CALLS:
            return StaticIssue(reasons.FORBIDDEN_CALL, f"call to `{node.func.id}()`", line)
        if node.func.id == "type" and len(node.args) > 1:
            return StaticIssue(reasons.FORBIDDEN_CALL, "`type()` building a class", line)
    elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Call)
          and isinstance(node.func.func, ast.Name) and node.func.func.id == "type"):
        # `type(type)("C", (int,), {...})`: the class of a class builds classes
        return StaticIssue(reasons.FORBIDDEN_CALL, "a call of what `type()` returned", line)
    elif isinstance(node, ast.Match):
        # its patterns bind names no `ast.Name` shows (`case __name__:`) and read attributes
        # by keyword (`case object(utils=u)` is `torch.utils`)
        return StaticIssue(reasons.FORBIDDEN_CONSTRUCT, "a `match` statement (its patterns "
                           "bind names and read attributes the rules cannot see)", line)
    elif isinstance(node, ast.Name):
        if node.id in {"__builtins__", "__loader__", "__spec__", "__dict__"}:
            return StaticIssue(reasons.FORBIDDEN_ATTRIBUTE, f"use of `{node.id}`", line)
        if node.id in FORBIDDEN_CALLS and isinstance(node.ctx, ast.Load):
            return StaticIssue(reasons.FORBIDDEN_CALL, f"reference to `{node.id}`", line)
    elif isinstance(node, ast.Attribute):
        if node.attr == "__init__" and not own_init(node.value, aliases, own_classes):
            # `desc.__init__(...)` rebuilt an argument in place after the launch checked it;
            # a class's own constructor chain is `super().__init__`
            return StaticIssue(reasons.FORBIDDEN_ATTRIBUTE, "`.__init__` other than "
                               "`super().__init__` or a base class's", line)
        return _check_attribute(node, aliases, line, whole_chain=id(node) not in inner,
                                trusted=trusted)
    elif isinstance(node, ast.Try | ast.TryStar) and not _import_choice(node):
        return StaticIssue(reasons.FORBIDDEN_CONSTRUCT,
                           "try/except (a silent fallback hides failures; a `try` may only "
                           "choose between imports, catching ImportError)", line)
    elif isinstance(node, ast.Global | ast.Nonlocal):
        return StaticIssue(reasons.FORBIDDEN_CONSTRUCT, "global/nonlocal state", line)
    elif isinstance(node, ast.ClassDef):
        for stmt in node.body:
            for name, at in bindings(stmt) if not isinstance(stmt, ast.FunctionDef) else [
                    (stmt.name, stmt.lineno)]:
                if name in FORBIDDEN_ATTRIBUTES:
                    # Triton probes arguments with `hasattr(arg, "data_ptr")`
                    return StaticIssue(reasons.FORBIDDEN_CONSTRUCT, f"a class attribute named "
                                       f"`{name}` (a name the checks refuse to read)", at)
        for base in node.bases:
            text = ast.unparse(base)
            if text in {"torch.Tensor", "Tensor"} or text.endswith(".Tensor"):
                return StaticIssue(reasons.FORBIDDEN_CONSTRUCT, "a torch.Tensor subclass", line)
            if text in BUILTIN_TYPES and not _enum_mixin(node, aliases):
                # an `int` whose properties run code when Triton inspects kernel arguments
                # (`class R(str, Enum)` is an enum: its members are refused as arguments)
                return StaticIssue(reasons.FORBIDDEN_CONSTRUCT, f"a subclass of `{text}`", line)
            if not _allowed_base(base, aliases, own_classes) and not (
                    text in BUILTIN_TYPES and _enum_mixin(node, aliases)):
                return StaticIssue(reasons.FORBIDDEN_CONSTRUCT,
                                   f"a subclass of `{text}` (a class may derive from nn "
                                   "modules, the file's own classes, containers, typing and "
                                   "enum helpers)", line)
    elif isinstance(node, ast.AsyncFunctionDef):
        return StaticIssue(reasons.FORBIDDEN_CONSTRUCT, "async code", line)
    elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Delete):
        targets = node.targets if isinstance(node, ast.Assign | ast.Delete) else [node.target]
        for target in _flatten(targets):
            if isinstance(target, ast.Subscript) and not _own_container(target.value):
                return StaticIssue(reasons.FORBIDDEN_CONSTRUCT,
                                   f"assigns into `{ast.unparse(target.value)}` (only into a "
                                   "variable or `self.<name>`: patching is not allowed)", line)
            if (isinstance(target, ast.Attribute) and root_name(target) is not None
                    and not trusted_root(target, trusted) and id(target) not in ctx_fields):
                return StaticIssue(reasons.FORBIDDEN_CONSTRUCT,
                                   f"assigns to `{ast.unparse(target)}` (only `self.…` may be "
                                   "assigned: patching is not allowed)", line)
    return None


def _check_attribute(node: ast.Attribute, aliases: dict[str, str], line: int,
                     whole_chain: bool, trusted: frozenset[int] | None = None) -> StaticIssue | None:
    attr = node.attr
    path = dotted(node, aliases) if whole_chain else None
    if path is not None and forbidden_path(path):
        return StaticIssue(reasons.FORBIDDEN_ATTRIBUTE, f"use of `{path}`", line)
    if path is not None and stdlib_member(path):
        return None  # `time.time`, `random.random`: the module's name list judged it
    if not whole_chain and dotted(node, aliases) in DOTTED_MODULES:
        return None  # `os.path` in `os.path.join`: the whole chain is judged by its name list
    on_self = (isinstance(node.value, ast.Name) and node.value.id == "self"
               and (trusted is None or id(node.value) in trusted))
    if path in ALLOWED_MODULE_PATHS:
        return None  # named one by one (`torch.nn.init._calculate_fan_in_and_fan_out`)
    if attr.startswith("_") and attr not in ALLOWED_DUNDERS | ALLOWED_PRIVATE and not on_self:
        # `self._cache` is the candidate's own; `self.t._C` (with `self.t = torch`) is not
        return StaticIssue(reasons.FORBIDDEN_ATTRIBUTE, f"private attribute `.{attr}`", line)
    if attr.startswith("__") and attr not in ALLOWED_DUNDERS:
        return StaticIssue(reasons.FORBIDDEN_ATTRIBUTE, f"dunder attribute `.{attr}`", line)
    if attr in FORBIDDEN_ATTRIBUTES or attr.startswith(FORBIDDEN_ATTRIBUTE_PREFIXES) \
            or attr.endswith(FORBIDDEN_ATTRIBUTE_SUFFIXES):
        return StaticIssue(reasons.FORBIDDEN_ATTRIBUTE, f"attribute `.{attr}`", line)
    if (attr in MODULE_NAMES or attr in reachable_modules(frozenset(ALLOWED_IMPORTS)) - HARMLESS_MODULE_NAMES) and not on_self:
        return StaticIssue(reasons.FORBIDDEN_ATTRIBUTE, f"attribute `.{attr}` (a module, or a way "
                           "to modules)", line)
    if attr in STDLIB_NAMES and attr != "math" and not on_self:
        # `torch.functional.operator.setitem`: the allowed stdlib modules only by their own
        # name, where their name lists apply (`math` is also `tl.math`, Triton's own)
        return StaticIssue(reasons.FORBIDDEN_ATTRIBUTE, f"attribute `.{attr}` (import the "
                           "module itself)", line)
    if attr in FORBIDDEN_CALLS and not on_self:  # `enum.bltns.exec`
        return StaticIssue(reasons.FORBIDDEN_ATTRIBUTE, f"attribute `.{attr}`", line)
    return None


IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError"}


def _import_choice(node: ast.Try | ast.TryStar) -> bool:
    """`try: from triton.language.extra.libdevice import rsqrt` / `except ModuleNotFoundError:
    from triton.language.extra.cuda.libdevice import rsqrt`: a choice between imports (each
    judged by the import rules), not a fallback around computation."""
    def imports_only(body: list[ast.stmt]) -> bool:
        return all(isinstance(stmt, ast.Import | ast.ImportFrom | ast.Pass) for stmt in body)

    def catches_import_errors(handler: ast.ExceptHandler) -> bool:
        kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        return handler.name is None and all(
            isinstance(k, ast.Name) and k.id in IMPORT_ERRORS for k in kinds)

    return (isinstance(node, ast.Try) and bool(node.handlers) and not node.finalbody
            and imports_only(node.body) and imports_only(node.orelse)
            and all(catches_import_errors(h) and imports_only(h.body) for h in node.handlers))


def _getattr_by_constant(tree: ast.Module, aliases: dict[str, str]) -> set[int]:
    """`getattr(obj, "name"[, default])` with a public name the attribute rules accept on
    `obj`: the ids of those calls and of their `getattr` names (the one form of getattr
    that is only an attribute read)."""
    ids: set[int] = set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "getattr" and len(node.args) in (2, 3) and not node.keywords
                and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)
                and node.args[1].value.isidentifier() and not node.args[1].value.startswith("_")):
            continue
        if dotted(node.args[0], aliases) is not None:
            continue  # on a module its result is a chain no path rule follows
        read = ast.Attribute(value=node.args[0], attr=node.args[1].value, ctx=ast.Load())
        if _check_attribute(read, aliases, node.lineno, whole_chain=True) is None:
            ids.update((id(node), id(node.func)))
    return ids


def _imported_name_issue(full: str, line: int) -> StaticIssue | None:
    """`from a.b import c`, judged as the chain `a.b.c` (its path judged by the caller)."""
    root, *rest = full.split(".")
    node: ast.expr = ast.Name(id=root, ctx=ast.Load())
    for attr in rest:
        node = ast.Attribute(value=node, attr=attr, ctx=ast.Load())
        issue = _check_attribute(node, {root: root}, line, whole_chain=False)
        if issue:
            return issue
    return None


def _keyword_names(call: ast.Call) -> list[str]:
    """The keywords a call passes, also those of a `**{...}` or `**dict(...)` it unpacks (a
    dict built elsewhere is the run-time lockdown's to refuse)."""
    names: list[str] = []
    for k in call.keywords:
        if k.arg is not None:
            names.append(k.arg)
        elif isinstance(k.value, ast.Dict):
            names.extend(key.value for key in k.value.keys
                         if isinstance(key, ast.Constant) and isinstance(key.value, str))
        elif isinstance(k.value, ast.Call):
            names.extend(_keyword_names(k.value))
    return names


def _own_container(value: ast.expr) -> bool:
    """`cache[k] = v`, `self.cache[k] = v`, `y[0] = ...`: the candidate's own objects —
    not `kernel.rewritten_fn[...]` or `torch.x.y[...]`."""
    if isinstance(value, ast.Subscript):
        return _own_container(value.value)
    if isinstance(value, ast.Name):
        return True
    return (isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name)
            and value.value.id == "self")


def _flatten(targets: list[ast.expr]) -> list[ast.expr]:
    out: list[ast.expr] = []
    for t in targets:
        if isinstance(t, ast.Tuple | ast.List):
            out.extend(_flatten(list(t.elts)))
        else:
            out.append(t)
    return out
