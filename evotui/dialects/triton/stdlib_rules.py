"""What a Triton candidate may use of the standard library, by name. Part of
static_rules.check_source.

The sandbox keeps the machine safe whatever a candidate imports. These lists keep the
*verdict* safe: the candidate runs in the process that times it and writes its answer, so
a module that writes to a file descriptor (the answer's pipe is one: ``os.write``, ``open``,
``logging.basicConfig(filename=...)``), runs code from strings, walks frames or starts
threads would let it forge or hide from what the judge sees. So a module is allowed by the
names it holds that do none of that: reading the (scrubbed) environment, paths and the
clock, loggers, pure helpers.
"""

from __future__ import annotations

import ast

from evotui.core import reasons
from evotui.dialects.base import StaticIssue
from evotui.dialects.triton.ast_paths import dotted
from evotui.dialects.triton.scope_rules import bindings

# name → the public names a candidate may read through it (None: every public name — pure
# functions). Whole modules let escapes in: `typing.get_type_hints` evaluates strings,
# `functools.update_wrapper` is getattr/setattr by string, `enum.bltns` is builtins.
STDLIB_NAMES: dict[str, frozenset[str] | None] = {
    "math": None,
    "itertools": None,
    "operator": frozenset({
        "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "neg", "pos", "abs", "and_",
        "or_", "xor", "invert", "lshift", "rshift", "lt", "le", "eq", "ne", "ge", "gt", "not_",
        "index", "matmul", "itemgetter", "iadd", "imul"}),
    "typing": frozenset({
        "Any", "Optional", "Union", "List", "Tuple", "Dict", "Set", "FrozenSet", "Callable",
        "Literal", "NamedTuple", "TypeVar", "Generic", "Protocol", "ClassVar", "Final",
        "Sequence", "Mapping", "Iterable", "Iterator", "cast", "overload", "TYPE_CHECKING",
        "TypeAlias", "Type", "Annotated", "Self"}),
    "functools": frozenset({"partial", "reduce", "lru_cache", "cache", "cached_property",
                            "total_ordering", "partialmethod",
                            # only as `@functools.wraps(fn)` in a decorator (check_wraps)
                            "wraps"}),
    "dataclasses": frozenset({"dataclass", "field", "fields", "replace", "asdict", "astuple",
                              "InitVar", "KW_ONLY", "is_dataclass"}),
    "collections": frozenset({"namedtuple", "OrderedDict", "defaultdict", "deque", "Counter",
                              "abc"}),
    "collections.abc": frozenset({  # the abstract container types, for annotations
        "Callable", "Iterable", "Iterator", "Sequence", "MutableSequence", "Mapping",
        "MutableMapping", "Set", "MutableSet", "Collection", "Container", "Sized", "Hashable",
        "Generator"}),
    "enum": frozenset({"Enum", "IntEnum", "Flag", "IntFlag", "StrEnum", "auto", "unique"}),
    # not `suppress` or `ExitStack`: an exception swallowed is a `try` in disguise
    "contextlib": frozenset({"contextmanager", "nullcontext", "AbstractContextManager"}),
    # not handlers, and no `filename=` (FORBIDDEN_KEYWORDS): a log file can be the answer's pipe
    "logging": frozenset({
        "getLogger", "basicConfig", "debug", "info", "warning", "error", "exception",
        "critical", "log", "Logger", "NullHandler", "DEBUG", "INFO", "WARNING", "WARN", "ERROR",
        "CRITICAL", "NOTSET", "getLevelName"}),
    "time": frozenset({"time", "time_ns", "perf_counter", "perf_counter_ns", "monotonic",
                       "monotonic_ns", "process_time", "process_time_ns", "sleep",
                       "strftime", "localtime", "gmtime", "ctime"}),
    "random": None,
    "warnings": frozenset({"warn", "filterwarnings", "simplefilter", "catch_warnings"}),
    # an environment flag, the machine's size, paths: reads only (ENVIRONMENT_READS)
    "os": frozenset({"environ", "getenv", "path", "cpu_count", "getpid", "sep", "linesep",
                     "name", "curdir", "pardir"}),
    "os.path": frozenset({"join", "exists", "isfile", "isdir", "dirname", "basename",
                          "abspath", "realpath", "splitext", "split", "expanduser", "normpath",
                          "getsize", "relpath", "sep"}),
    # paths, read; what writes a file is refused by name (static_rules.FORBIDDEN_ATTRIBUTES)
    "pathlib": frozenset({"Path", "PurePath", "PosixPath", "PurePosixPath"}),
}
# modules named by two parts: judged as one (`collections.abc.Sequence`, `os.path.join`)
DOTTED_MODULES = tuple(name for name in STDLIB_NAMES if "." in name)
# `os.environ` read as a mapping: `.get(k)`, `[k]`, `k in`, a copy. A candidate that changed
# it would change what Triton and torch do while the harness runs (their TRITON_* and
# PYTORCH_* switches are read lazily).
ENVIRONMENT = "os.environ"
ENVIRONMENT_READS = frozenset({"get", "copy", "keys", "items", "values"})
WRAPS_DECORATOR = "functools.wraps"


def stdlib_parts(path: str) -> list[str]:
    """`collections.abc.Sequence` → [`collections.abc`, `Sequence`]; other paths by dot."""
    for name in DOTTED_MODULES:
        if path == name or path.startswith(name + "."):
            return [name, *path[len(name) + 1:].split(".")] if path != name else [name]
    return path.split(".")


def forbidden_stdlib_path(path: str) -> bool | None:
    """Whether a dotted name that starts at an allowed standard-library module reads a
    name its list leaves out; None for any other path."""
    parts = stdlib_parts(path)
    if parts[0] not in STDLIB_NAMES or len(parts) < 2:
        return None
    if path.startswith(ENVIRONMENT + ".") and path.split(".")[2] not in ENVIRONMENT_READS:
        return True
    allowed = STDLIB_NAMES[parts[0]]
    return parts[1].startswith("_") or (allowed is not None and parts[1] not in allowed)


def stdlib_member(path: str) -> bool:
    """`time.time`, `logging.getLogger`, `collections.abc.Sequence`: a public name of an allowed
    standard-library module, read through that module (its name list applies)."""
    parts = stdlib_parts(path)
    return len(parts) == 2 and parts[0] in STDLIB_NAMES and not parts[1].startswith("_")


def check_environment(tree: ast.Module, aliases: dict[str, str]) -> StaticIssue | None:
    """`os.environ` only read: `os.environ.get(k)`, `os.environ[k]`, `k in os.environ` (also
    through `from os import environ`). Held as a value it can be changed (`env = os.environ;
    env["TRITON_INTERPRET"] = "0"`)."""
    parents: dict[int, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Attribute | ast.Name) and isinstance(node.ctx, ast.Load)
                and dotted(node, aliases) == ENVIRONMENT):
            continue
        parent = parents.get(id(node))
        if isinstance(parent, ast.Attribute) and parent.attr in ENVIRONMENT_READS:
            continue
        if isinstance(parent, ast.Subscript) and isinstance(parent.ctx, ast.Load):
            continue
        if (isinstance(parent, ast.Compare) and node in parent.comparators
                and all(isinstance(op, ast.In | ast.NotIn) for op in parent.ops)):
            continue
        return StaticIssue(reasons.FORBIDDEN_ATTRIBUTE,
                           f"`{ast.unparse(node)}` other than read (`.get(name)`, `[name]`, "
                           "`name in`): the environment steers Triton and torch while the "
                           "harness runs", node.lineno)
    return None


def check_wraps(tree: ast.Module, aliases: dict[str, str]) -> StaticIssue | None:
    """`functools.wraps` only as `@functools.wraps(fn)` on a def nested in a function whose
    parameter `fn` is (bound nowhere else there): the decorator pattern, which copies the
    wrapped function's name and docstring onto the candidate's own new function. Anywhere
    else it is getattr/setattr by string between any two objects (`update_wrapper(self,
    torch)` copied a module's names onto `self`)."""
    def is_wraps(node: ast.AST) -> bool:
        if isinstance(node, ast.Attribute):
            return dotted(node, aliases) == WRAPS_DECORATOR
        return (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
                and aliases.get(node.id) == WRAPS_DECORATOR)

    allowed: set[int] = set()
    for outer in ast.walk(tree):
        if not isinstance(outer, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        args = outer.args
        params = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
        bound = [name for name, _ in bindings(outer)]
        for inner in ast.walk(outer):
            if inner is outer or not isinstance(inner, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for dec in inner.decorator_list:
                if (isinstance(dec, ast.Call) and is_wraps(dec.func) and len(dec.args) == 1
                        and not dec.keywords and isinstance(dec.args[0], ast.Name)
                        and dec.args[0].id in params and bound.count(dec.args[0].id) == 1):
                    allowed.add(id(dec.func))
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute | ast.Name) and id(node) not in allowed
                and is_wraps(node)):
            return StaticIssue(reasons.FORBIDDEN_ATTRIBUTE,
                               f"`{ast.unparse(node)}` other than as `@functools.wraps(fn)` on "
                               "a def inside the function that takes `fn` (a decorator)",
                               node.lineno)
    return None
