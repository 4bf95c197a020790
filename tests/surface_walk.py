"""Walk what a Triton candidate can reach from its allowed imports, and ask the static rules
about every way found to something dangerous.

Run as ``python -m tests.surface_walk`` (``tests/sandbox/test_reachable_surface.py`` does, in a fresh
process): it prints one JSON object, ``{"passing": [...], "stats": {...}}``, where each
passing entry is a chain of attributes (``torch.foo.bar``, ``x.d['k'].f``) that reaches a
dangerous object *and* that ``static_rules.check_source`` accepts in a small candidate.

The walk is breadth first, from each allowed import (``static_rules.ALLOWED_IMPORTS``), from
the names ``from <allowed import> import <name>`` binds where the rules allow that import but
not the attribute, and from objects a candidate builds itself (its own ``@triton.jit``
kernel, as the interpreter's function and as the GPU's ``JITFunction``, a tensor, an nn
module). An attribute step is taken only where ``static_rules._check_attribute`` (the rules'
own function) lets that step pass, so what is walked is what a candidate can write. Values
are read without running code: module and instance ``__dict__`` entries, class attributes
(functions, static and class methods), ``__slots__`` and builtin-type getters; never a
property, a C++ getter or any other descriptor.

The process is set up as the worker is (``CandidateRunner``: the launch hooks, the
interpreter fixes, ``torch._dynamo``, the lockdown), but the rules' list of module names
(``module_reach.reachable_modules``) is taken first, with only the allowed imports loaded,
as in the parent process that runs the static check.
"""

from __future__ import annotations

import os
import sys

if "triton" not in sys.modules:
    os.environ["TRITON_INTERPRET"] = "1"  # must be set before triton is imported

import _thread  # noqa: E402
import ast  # noqa: E402
import builtins  # noqa: E402
import collections  # noqa: E402
import functools  # noqa: E402
import importlib  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import types  # noqa: E402
import warnings  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from evotui.dialects.triton import path_rules  # noqa: E402
from evotui.dialects.triton import static_rules as rules  # noqa: E402
from evotui.dialects.triton.ast_paths import dotted  # noqa: E402
from evotui.dialects.triton.module_reach import MODULE_VALUES_ALLOWED, reachable_modules  # noqa: E402

MAX_DEPTH = 5  # attribute / item steps from a root (the surface saturates by 4-5)
MAX_NAMES = 3000  # names read per object (torch has ~1500, torch.Tensor ~800)
MAX_ITEMS = 300  # items read per dict, list or tuple
MAX_NODES = 120_000  # objects expanded in all (deterministic: no wall-clock budget)

# The candidate file every chain is checked in: the chain's root is bound as the candidate
# would bind it, then read (`x = <chain>`).
HEAD = "import torch\nimport torch.nn as nn\nimport triton\nimport triton.language as tl\n"
TAIL = "\n\nclass ModelNew(nn.Module):\n    pass\n"

# Objects a candidate builds itself (bound in the candidate's own module): its kernel, a
# tensor, modules, the small torch objects it gets from torch calls.
OWN_OBJECTS = """
SCALE = tl.constexpr(2)


@triton.jit
def kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n)
    tl.store(x_ptr + offs, x * SCALE, mask=offs < n)


@triton.autotune(configs=[triton.Config({"BLOCK": 16}, num_warps=1)], key=["n"])
@triton.jit
def tuned(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


tensor = torch.ones(4, requires_grad=True) * 2
linear = nn.Linear(4, 4)
finfo = torch.finfo(torch.float32)
device = torch.device("cpu")
size = torch.ones(2, 3).shape
config = triton.Config({"BLOCK": 16}, num_warps=1)
"""
OWN_NAMES = ("kernel", "tuned", "tensor", "linear", "finfo", "device", "size", "config")

# -- what is dangerous ----------------------------------------------------------------------
# Modules whose functions, classes and instances reach files, processes, memory, the import
# system, frames or code evaluation. (Not the rules' list: this is what the rules must keep
# out of reach, whatever they ban.)
DANGEROUS_MODULES = frozenset(
    {
        "os",
        "posix",
        "nt",
        "sys",
        "subprocess",
        "_posixsubprocess",
        "ctypes",
        "_ctypes",
        "importlib",
        "_imp",
        "_frozen_importlib",
        "_frozen_importlib_external",
        "zipimport",
        "pkgutil",
        "runpy",
        "io",
        "_io",
        "shutil",
        "tempfile",
        "pathlib",
        "glob",
        "fileinput",
        "socket",
        "_socket",
        "pickle",
        "_pickle",
        "marshal",
        "copyreg",
        "shelve",
        "dbm",
        "inspect",
        "gc",
        "signal",
        "_signal",
        "pty",
        "fcntl",
        "mmap",
        "resource",
        "multiprocessing",
        "_multiprocessing",
        "_thread",
        "threading",
        "concurrent",
        "asyncio",
        "code",
        "codeop",
        "pdb",
        "bdb",
        "linecache",
        "tokenize",
        "traceback",
        "faulthandler",
        "atexit",
        "zipfile",
        "tarfile",
        "gzip",
        "bz2",
        "lzma",
        "sqlite3",
        "webbrowser",
        "urllib",
        "http",
        "ftplib",
        "smtplib",
        # (not `logging`: candidates import it for their loggers, by its name list; it writes
        # a file only where `filename=` tells it to, which the rules refuse. Streams and
        # modules its objects hold are dangerous where they lead.)
        "sysconfig",
        "site",
    }
)
# builtins that evaluate code, import, open files or read and write attributes by name
DANGEROUS_BUILTIN_NAMES = (
    "eval",
    "exec",
    "compile",
    "__import__",
    "open",
    "getattr",
    "setattr",
    "delattr",
    "globals",
    "locals",
    "vars",
    "breakpoint",
    "input",
    "exit",
    "quit",
    "help",
    "__build_class__",
    "type",
)
# types that run or describe code: a function built from a code object, a frame's stack
DANGEROUS_TYPES = (types.FrameType, types.TracebackType, types.CodeType)
DANGEROUS_TYPE_OBJECTS = (
    types.FunctionType,
    types.CodeType,
    types.FrameType,
    types.TracebackType,
    types.CellType,
)
# functions that read or write files, load native code or start processes, by name
# torch / triton callables that run code the rules never see (by module and name)
DANGEROUS_CALLABLES = {
    "torch.jit.CompilationUnit": "compiles TorchScript from a string, which reaches "
    "torch.ops (aten::from_file) in C++",
    "triton.compiler.compiler.compile": "compiles kernels the kernel rules and the launch "
    "hooks never see",
}
# helpers of dangerous modules that only compute on strings
PURE_FUNCTIONS = frozenset({"glob.has_magic", "glob.escape"})
# what the rules allow of os and pathlib on purpose: reads of the (scrubbed) environment, the
# machine and paths; a path's methods but those that open or write a file
READ_ONLY_CALLABLES = frozenset({"posix.getpid", "posix.cpu_count", "os.getenv", "os.copy"})
PATH_WRITERS = frozenset({"open", "write_text", "write_bytes", "touch", "symlink_to",
                          "hardlink_to", "link_to"})
FILE_FUNCTION_NAMES = frozenset(
    {
        "load",
        "save",
        "fromfile",
        "tofile",
        "memmap",
        "loadtxt",
        "savetxt",
        "savez",
        "savez_compressed",
        "genfromtxt",
        "from_file",
        "load_library",
        "load_inline",
        "PyTorchFileWriter",
        "PyTorchFileReader",
        "system",
        "popen",
        "spawn",
        "dlopen",
        "CDLL",
        "LoadLibrary",
        "import_module",
        "module_from_spec",
        "spec_from_file_location",
    }
)

# locks (`functools.RLock` is `_thread.RLock`): acquire and release, nothing more
_LOCK_TYPES = (type(_thread.allocate_lock()), _thread.RLock)

_SKIP = object()  # a value the walk will not read (it would run code)
_LEAF_TYPES = (
    int,
    float,
    complex,
    str,
    bytes,
    bool,
    type(None),
    type(Ellipsis),
    types.BuiltinFunctionType,
    types.MethodDescriptorType,
    types.WrapperDescriptorType,
    types.MethodWrapperType,
    types.ClassMethodDescriptorType,
    types.GetSetDescriptorType,
    types.MemberDescriptorType,
)


def _isa(obj: Any, kinds: Any) -> bool:
    """``isinstance`` by the object's real type (``isinstance`` may read ``obj.__class__``,
    which an object can make a property)."""
    return issubclass(type(obj), kinds)


def _module_dict(module: types.ModuleType) -> dict[str, Any]:
    return _MODULE_DICT.__get__(module, types.ModuleType)


_MODULE_DICT = types.ModuleType.__dict__["__dict__"]


@functools.cache
def _dangerous_builtin_ids() -> frozenset[int]:
    return frozenset(
        id(getattr(builtins, n)) for n in DANGEROUS_BUILTIN_NAMES if hasattr(builtins, n)
    )


def _allowed_families() -> tuple[str, ...]:
    """Top-level names of the allowed imports: their modules are no foreign modules."""
    return tuple(sorted({n.split(".")[0] for n in rules.ALLOWED_IMPORTS} - {"__future__"}))


def _owner_module(obj: Any) -> str:
    """The module a function or class comes from, read without running code."""
    try:
        if _isa(obj, type):
            name = type.__dict__["__module__"].__get__(obj, type)
        elif _isa(obj, types.FunctionType):
            name = types.FunctionType.__dict__["__module__"].__get__(obj)
        elif _isa(obj, types.BuiltinFunctionType):
            name = obj.__module__  # (its C getter: the type has no subclasses)
        else:
            return ""
    except Exception:  # noqa: BLE001 - an odd object: no owner
        return ""
    return name if type(name) is str else ""


def _top(module_name: str) -> str:
    return module_name.split(".")[0]


def _callable_name(obj: Any) -> str:
    try:
        if _isa(obj, type):
            return type.__dict__["__name__"].__get__(obj, type)
        if _isa(obj, types.FunctionType | types.BuiltinFunctionType):
            return obj.__name__  # (C getters)
    except Exception:  # noqa: BLE001
        return ""
    return ""


def danger(obj: Any) -> str | None:
    """Why a candidate must not hold ``obj``, or None."""
    if _isa(obj, types.ModuleType):
        name = _module_dict(obj).get("__name__", "")
        if type(name) is not str:
            return "a module"
        if name.startswith(MODULE_VALUES_ALLOWED):
            return None  # triton.language's and math: values by design
        if _top(name) not in _allowed_families():
            return f"the module {name} (outside the allowed imports)"
        return f"the module {name} as a value (its attributes escape the path rules)"
    # (identity only: `==` on an object runs its `__eq__`)
    if any(obj is t for t in _LOCK_TYPES) or _isa(obj, _LOCK_TYPES):
        return None
    if id(obj) in _dangerous_builtin_ids():
        return f"the builtin {_callable_name(obj) or obj!r}"
    if _isa(obj, DANGEROUS_TYPES):
        return f"a {type(obj).__name__} object"
    if any(obj is t for t in DANGEROUS_TYPE_OBJECTS):
        return f"the type {obj.__name__} (builds functions from code, or walks frames)"
    if _isa(obj, dict):
        return _dangerous_mapping(obj)
    owner = _owner_module(obj)
    if f"{owner}.{_callable_name(obj)}" in READ_ONLY_CALLABLES or (
            owner == "pathlib" and _callable_name(obj) not in PATH_WRITERS):
        return None
    if (
        owner
        and _top(owner) in DANGEROUS_MODULES
        and (f"{owner}.{_callable_name(obj)}" not in PURE_FUNCTIONS)
    ):
        kind = "class" if _isa(obj, type) else "function"
        return f"the {kind} {owner}.{_callable_name(obj)}"
    if f"{owner}.{_callable_name(obj)}" in DANGEROUS_CALLABLES:
        return f"{owner}.{_callable_name(obj)}: {DANGEROUS_CALLABLES[f'{owner}.{_callable_name(obj)}']}"
    if (
        owner
        and _callable_name(obj) in FILE_FUNCTION_NAMES
        and not owner.startswith(MODULE_VALUES_ALLOWED)
    ):  # `tl.load`: a kernel's load
        return f"{owner}.{_callable_name(obj)} (files, native code or processes)"
    if not _isa(obj, type | types.FunctionType | types.BuiltinFunctionType):
        cls_owner = _owner_module(type(obj))
        if _top(cls_owner) in DANGEROUS_MODULES:
            return f"an instance of {cls_owner}.{type(obj).__qualname__}"
    return None


def _dangerous_mapping(d: dict[Any, Any]) -> str | None:
    keys, values = list(dict.keys(d)), list(dict.values(d))
    names = {k for k in keys if type(k) is str}
    if "__builtins__" in names or "__import__" in names:
        return "a module's globals or the builtins (with __builtins__ / __import__)"
    if any(_isa(v, types.ModuleType) for v in values[:4096]):
        return "a dict of modules (like sys.modules)"
    return None


# -- reading attributes without running code -------------------------------------------------
_CLASS_ATTRS: dict[int, tuple[type, dict[str, Any]]] = {}  # by id: hashing runs __hash__


def _class_attrs(cls: type) -> dict[str, Any]:
    """Name -> raw attribute over the MRO (first definition wins), as lookup finds them."""
    cached = _CLASS_ATTRS.get(id(cls))
    if cached is not None and cached[0] is cls:
        return cached[1]
    merged: dict[str, Any] = {}
    _CLASS_ATTRS[id(cls)] = (cls, merged)  # (holds cls: its id stays its own)
    try:
        mro = type.__dict__["__mro__"].__get__(cls, type)
    except Exception:  # noqa: BLE001
        mro = (cls,)
    for klass in mro:
        try:
            own = type.__dict__["__dict__"].__get__(klass, type)
        except Exception:  # noqa: BLE001
            continue
        for name, value in list(dict.items(own) if _isa(own, dict) else own.items())[:MAX_NAMES]:
            if type(name) is str:
                merged.setdefault(name, value)
    return merged


def _is_data_descriptor(raw: Any) -> bool:
    t = type(raw)
    attrs = _class_attrs(t)
    return "__set__" in attrs or "__delete__" in attrs


def _has_get(raw: Any) -> bool:
    return "__get__" in _class_attrs(type(raw))


def _instance_dict(obj: Any) -> dict[str, Any]:
    if _isa(obj, type):
        return {}
    slot = _class_attrs(type(obj)).get("__dict__")
    if type(slot) is not types.GetSetDescriptorType:
        return {}  # none, or a class that defines `__dict__` itself
    try:
        d = slot.__get__(obj, type(obj))
    except Exception:  # noqa: BLE001
        return {}
    return d if _isa(d, dict) else {}


def _through_descriptor(raw: Any, obj: Any, on_class: bool) -> Any:
    """What `obj.name` gives for the raw class attribute ``raw``, or _SKIP where finding
    out would run code (a property, a C++ getter, a descriptor of Python code)."""
    if type(raw) is staticmethod or type(raw) is classmethod:
        return raw.__func__
    if _isa(raw, types.FunctionType):
        return raw  # (a bound method on an instance: the same function)
    if not _has_get(raw):
        return raw
    if on_class and _isa(
        raw,
        property
        | functools.cached_property
        | types.GetSetDescriptorType
        | types.MemberDescriptorType
        | types.MethodDescriptorType
        | types.WrapperDescriptorType
        | types.ClassMethodDescriptorType,
    ):
        return raw  # on the class itself these give themselves (or a builtin method)
    if _isa(
        raw,
        types.MethodDescriptorType
        | types.WrapperDescriptorType
        | types.ClassMethodDescriptorType
        | types.BuiltinFunctionType,
    ):
        return raw  # a builtin method: stands for the bound one
    if type(raw) is types.MemberDescriptorType:
        try:
            return raw.__get__(obj, type(obj))  # a __slots__ read
        except Exception:  # noqa: BLE001
            return _SKIP
    if type(raw) is types.GetSetDescriptorType and _owner_module(raw.__objclass__) == "builtins":
        try:
            return raw.__get__(obj, type(obj))  # a getter of a builtin type (CPython's own)
        except Exception:  # noqa: BLE001
            return _SKIP
    return _SKIP


def attribute_names(obj: Any) -> list[str]:
    if _isa(obj, types.ModuleType):
        return [n for n in list(_module_dict(obj))[:MAX_NAMES] if type(n) is str]
    names = dict.fromkeys(n for n in _instance_dict(obj) if type(n) is str)
    names.update(dict.fromkeys(_class_attrs(obj if _isa(obj, type) else type(obj))))
    if _isa(obj, type):
        names.update(dict.fromkeys(_class_attrs(type(obj))))
    return list(names)[:MAX_NAMES]


def static_attr(obj: Any, name: str) -> Any:
    """``obj.<name>`` read without running code, or _SKIP."""
    if _isa(obj, types.ModuleType):
        return _module_dict(obj).get(name, _SKIP)
    if _isa(obj, type):
        meta_raw = _class_attrs(type(obj)).get(name, _SKIP)
        if meta_raw is not _SKIP and _is_data_descriptor(meta_raw):
            return _through_descriptor(meta_raw, obj, on_class=False)
        raw = _class_attrs(obj).get(name, _SKIP)
        if raw is not _SKIP:
            return _through_descriptor(raw, obj, on_class=True)
        if meta_raw is not _SKIP:
            return _through_descriptor(meta_raw, obj, on_class=False)
        return _SKIP
    raw = _class_attrs(type(obj)).get(name, _SKIP)
    if raw is not _SKIP and _is_data_descriptor(raw):
        return _through_descriptor(raw, obj, on_class=False)
    own = _instance_dict(obj)
    if name in own:
        return own[name]
    if raw is not _SKIP:
        return _through_descriptor(raw, obj, on_class=False)
    return _SKIP


def items(obj: Any) -> list[tuple[ast.expr, Any]]:
    """Subscript steps: `d['k']`, `t[0]`, and `list(d.values())[i]` for other keys."""
    out: list[tuple[ast.expr, Any]] = []
    if _isa(obj, dict):
        for i, (k, v) in enumerate(list(dict.items(obj))[:MAX_ITEMS]):
            literal = type(k) is str or type(k) is int
            out.append((ast.Constant(k) if literal else _values_index(i), v))
    elif _isa(obj, list | tuple):  # (the C iterators: a subclass's __iter__ is code)
        listed = list((list.__iter__ if _isa(obj, list) else tuple.__iter__)(obj))
        out.extend((ast.Constant(i), v) for i, v in enumerate(listed[:MAX_ITEMS]))
    return out


def _values_index(i: int) -> ast.expr:
    return ast.Constant(("values", i))  # marker, turned into list(<chain>.values())[i]


# -- chains as the candidate writes them -----------------------------------------------------
@dataclass(frozen=True)
class Root:
    """Where chains start: the candidate's lines that bind ``expr``'s first name."""

    label: str
    setup: str  # import lines or own code, added after HEAD
    expr: ast.expr
    aliases: dict[str, str] = field(hash=False)
    value: Any = field(hash=False, compare=False)


def step_attr(parent: ast.expr, name: str) -> ast.Attribute:
    return ast.Attribute(value=parent, attr=name, ctx=ast.Load())


def step_item(parent: ast.expr, key: ast.Constant) -> ast.expr:
    if type(key.value) is tuple:  # list(<parent>.values())[i]
        values = ast.Call(func=step_attr(parent, "values"), args=[], keywords=[])
        listed = ast.Call(func=ast.Name("list", ast.Load()), args=[values], keywords=[])
        return ast.Subscript(value=listed, slice=ast.Constant(key.value[1]), ctx=ast.Load())
    return ast.Subscript(value=parent, slice=key, ctx=ast.Load())


def candidate_source(root: Root, chain: ast.expr) -> str:
    return f"{HEAD}{root.setup}\nvalue = {ast.unparse(chain)}\n{TAIL}"


def rejected(root: Root, chain: ast.expr) -> bool:
    return rules.check_source(candidate_source(root, chain)) is not None


def edge_allowed(node: ast.Attribute, aliases: dict[str, str]) -> tuple[bool, bool]:
    """(may the walk take this attribute step, is the whole chain refused by its path):
    the step's name by ``_check_attribute`` as an inner link, its path as the whole chain —
    but a refused path is walked on where an allowed one continues it
    (``triton.runtime.driver`` towards ``...driver.active.get_current_device``)."""
    if rules._check_attribute(node, aliases, 0, whole_chain=False) is not None:
        return False, True
    if rules._check_attribute(node, aliases, 0, whole_chain=True) is None:
        return True, False
    path = dotted(node, aliases) or ""
    return any(a.startswith(path + ".") for a in path_rules.ALLOWED_MODULE_PATHS), True


# -- the walk -------------------------------------------------------------------------------
@dataclass
class Walk:
    passing: list[dict[str, str]] = field(default_factory=list)
    flagged: int = 0
    expanded: int = 0
    edges: int = 0
    keep: list[Any] = field(default_factory=list)  # ids stay valid while the walk runs

    def run(self, roots: list[Root]) -> None:
        seen: set[tuple[int, str]] = set()
        queue: collections.deque[tuple[Root, ast.expr, Any, int]] = collections.deque()
        for root in roots:
            why = danger(root.value) if root.label.startswith("from ") else None
            if not (why and self._flag(root, root.expr, root.value, why)):
                queue.append((root, root.expr, root.value, 0))
        while queue and self.expanded < MAX_NODES:
            root, chain, obj, depth = queue.popleft()
            mode = (dotted(chain, root.aliases) or "").split(".")[0]  # path rules apply?
            key = (id(obj), mode)
            if key in seen or depth >= MAX_DEPTH or _isa(obj, _LEAF_TYPES):
                continue
            seen.add(key)
            self.keep.append(obj)
            self.expanded += 1
            steps: list[tuple[ast.expr, Any, bool]] = []
            for name in attribute_names(obj):
                node = step_attr(chain, name)
                walkable, path_refused = edge_allowed(node, root.aliases)
                if not walkable:
                    continue
                value = static_attr(obj, name)
                if value is not _SKIP:
                    steps.append((node, value, path_refused))
            steps.extend((step_item(chain, k), v, False) for k, v in items(obj))
            for node, value, path_refused in steps:
                self.edges += 1
                why = None if path_refused else danger(value)
                if why and self._flag(root, node, value, why):
                    continue  # accepted: reported; its subtree is the candidate's anyway
                queue.append((root, node, value, depth + 1))

    def _flag(self, root: Root, chain: ast.expr, value: Any, why: str) -> bool:
        self.flagged += 1
        if rejected(root, chain):
            return False
        self.passing.append(
            {
                "chain": ast.unparse(chain),
                "root": root.label,
                "why": why,
                "setup": root.setup.strip(),
            }
        )
        return True


# -- roots ----------------------------------------------------------------------------------
def import_roots() -> list[Root]:
    """``import A`` for each allowed import A (chains written ``A.x.y``), and
    ``from A import n`` where the rules allow that import but refuse ``A.n``."""
    roots = []
    for name in sorted(rules.ALLOWED_IMPORTS - {"__future__"}):
        module = importlib.import_module(name)
        first = name.split(".")[0]
        expr = ast.parse(name, mode="eval").body
        aliases = {first: first}
        roots.append(Root(f"import {name}", f"import {name}", expr, aliases, module))
        for attr in list(module.__dict__):
            if type(attr) is not str or attr == "*":
                continue
            node = step_attr(expr, attr)
            if edge_allowed(node, aliases)[0] and not edge_allowed(node, aliases)[1]:
                continue  # the attribute chain covers it
            imp = ast.ImportFrom(module=name, names=[ast.alias(attr)], level=0, lineno=1)
            if rules._check_node(imp, {}, set(), set()) is not None:
                continue
            # bound under another name: `compile` itself would be refused as a Name
            line = f"from {name} import {attr} as {attr}_"
            roots.append(
                Root(
                    line,
                    line,
                    ast.Name(f"{attr}_", ast.Load()),
                    {f"{attr}_": f"{name}.{attr}"},
                    module.__dict__[attr],
                )
            )
    return roots


def value_roots() -> list[Root]:
    """The modules a candidate may hold as a value (``C = tl.core``): chains from such a
    name have no path for the rules to judge, only names (``C.ir`` was triton._C's)."""
    from evotui.dialects.triton.module_reach import MODULE_VALUES_ALLOWED, private_module

    roots = []
    for name, module in sorted(sys.modules.items()):
        if (module is None or not name.startswith(MODULE_VALUES_ALLOWED)
                or private_module(name)):
            continue
        first = "math" if name == "math" else "triton.language"
        setup = f"import {first}\nV = {name}"
        if rules.check_source(f"{HEAD}{setup}\n{TAIL}") is None:
            roots.append(Root(f"V = {name}", setup, ast.Name("V", ast.Load()), {}, module))
    return roots


def own_roots(tmp: Path) -> list[Root]:
    """The candidate's own objects: built from OWN_OBJECTS, loaded from a file as the worker
    loads a candidate (``triton.jit`` reads the source). ``kernel`` is walked twice: as this
    process's interpreter function and as the ``JITFunction`` a GPU worker makes, after one
    ``cache_key`` (what a launch computes: it fills ``used_global_vals``)."""
    path = tmp / "own_objects.py"
    path.write_text(HEAD + OWN_OBJECTS)
    spec = importlib.util.spec_from_file_location("surface_own_objects", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    setup = OWN_OBJECTS.strip()
    roots = [
        Root(f"own {n}", setup, ast.Name(n, ast.Load()), {}, getattr(module, n)) for n in OWN_NAMES
    ]
    from triton.runtime.jit import JITFunction

    kernel = module.kernel
    jitted = kernel if isinstance(kernel, JITFunction) else JITFunction(kernel.fn)
    _ = jitted.cache_key
    roots.append(
        Root("own kernel (JITFunction)", setup, ast.Name("kernel", ast.Load()), {}, jitted)
    )
    return roots


# A few bans lifted for the walk's self-check (``--weakened``): with them gone the walk must
# find the escapes they close again, or it has gone blind.
LIFTED_ATTRIBUTES = ("used_global_vals", "signature", "PyTorchFileWriter", "PyTorchFileReader")
LIFTED_PATHS = ("torch.PyTorchFileWriter", "torch.PyTorchFileReader")


WEAKENED_ROOTS = ("import torch", "import triton", "own kernel (JITFunction)")


def weaken_rules() -> None:
    rules.FORBIDDEN_ATTRIBUTES.difference_update(LIFTED_ATTRIBUTES)
    path_rules.FORBIDDEN_MODULE_PATHS = tuple(
        p for p in path_rules.FORBIDDEN_MODULE_PATHS if p not in LIFTED_PATHS
    )


def worker_state() -> None:
    """This process as a CPU worker is before it loads a candidate."""
    from evotui.eval.candidate_runner import CandidateRunner

    CandidateRunner("cpu")


def main(weakened: bool = False) -> dict[str, Any]:
    """The walk's report; with ``weakened``, a second walk under rules without the
    lifted bans (``weakened_passing``)."""
    t0 = time.perf_counter()
    warnings.simplefilter("ignore")
    reachable_modules(frozenset(rules.ALLOWED_IMPORTS))  # the parent's view, cached
    worker_state()
    with tempfile.TemporaryDirectory() as tmp:
        roots = import_roots() + value_roots() + own_roots(Path(tmp))
        for root in roots:  # a root the rules refuse by itself would hide all it reaches
            issue = rules.check_source(f"{HEAD}{root.setup}\n{TAIL}")
            if issue is not None:
                raise AssertionError(f"the rules refuse the root `{root.label}`: {issue}")
        t1 = time.perf_counter()
        walk = Walk()
        walk.run(roots)
        t2 = time.perf_counter()
        weak = Walk()
        if weakened:
            weaken_rules()
            weak.run([r for r in roots if r.label in WEAKENED_ROOTS])
    return {
        "passing": walk.passing,
        "weakened_passing": weak.passing,
        "stats": {
            "roots": len(roots),
            "expanded": walk.expanded,
            "edges": walk.edges,
            "flagged": walk.flagged,
            "setup_s": round(t1 - t0, 2),
            "walk_s": round(t2 - t1, 2),
            "weakened_walk_s": round(time.perf_counter() - t2, 2),
            "capped": walk.expanded >= MAX_NODES,
        },
    }


if __name__ == "__main__":
    print(json.dumps(main(weakened="--weakened" in sys.argv), indent=1))
