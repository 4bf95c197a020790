"""Static rules for what a ``@triton.jit`` body may touch: triton, its parameters and
locals, the file's jit functions and module-level constants, and a few builtins — what the
GPU compiler accepts. Under the CPU interpreter a kernel body is plain Python run with the op
policy suspended, so anything else (a global object's method, property, ``__getitem__`` or
operator; a Python helper) would compute unwatched. Part of static_rules.check_source.
"""

from __future__ import annotations

import ast
import functools
from collections import Counter

from evotui.core import reasons
from evotui.dialects.base import StaticIssue
from evotui.dialects.triton.ast_paths import resolve
from evotui.dialects.triton.kernel_defs import jit_defs, kernel_assignments
from evotui.dialects.triton.scope_rules import bindings

# what a `@triton.jit` body may call by bare name besides the file's own jit functions: on
# a GPU nothing else compiles, and under the CPU interpreter anything else is plain Python
# attributes of torch.finfo / torch.iinfo that are numbers
# calls without arguments that answer a bool or an int about the machine: a module constant
# may pick a code path by them (`ON_GPU = tl.constexpr(torch.cuda.is_available())`)
HOST_FACTS = {"torch.cuda.is_available", "torch.cuda.device_count"}
FINFO_NUMBERS = {"eps", "max", "min", "tiny", "smallest_normal", "resolution", "bits"}
JIT_BUILTINS = {"range", "min", "max", "len", "int", "float", "bool", "abs", "print",
                "isinstance", "tuple", "zip", "enumerate", "static_print", "static_assert"}


def check_kernel_bodies(tree: ast.Module, aliases: dict[str, str]) -> StaticIssue | None:
    """What a ``@triton.jit`` body may touch: triton, its parameters and locals, the file's
    jit functions and module-level constants, and a few builtins — what the GPU compiler
    accepts. Under the CPU interpreter anything else (a global object's method, property,
    ``__getitem__`` or operator) would run as plain Python with the op policy suspended."""
    # the same defs the launch hooks accept as kernels (that `triton.jit` appears only as a
    # decorator, so no other function becomes one, is jit_rules' to check)
    kernels = jit_defs(tree, aliases)
    own, constants, others = _module_names(tree, aliases, kernels)
    issue = _check_jit_names_bound_once(tree, own)
    if issue:
        return issue
    # a name bound to a constant and then to an object (`C = 1.0; C = Evil()`) is an object
    rebound = frozenset(_bindings(tree))
    plain, functions = _global_kinds(tree, aliases, constants)
    for kernel in kernels:
        issue = _check_parameter_notes(kernel, aliases, rebound)
        if issue:
            return issue
        local = {a.arg for a in kernel.args.args + kernel.args.kwonlyargs}
        for node in ast.walk(ast.Module(body=kernel.body, type_ignores=[])):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                local.add(node.id)
        for stmt in kernel.body:  # decorators and defaults run as ordinary Python: not here
            # `math.pi`: a module name read as the root of a chain (judged by its path)
            roots = {id(n.value) for n in ast.walk(stmt) if isinstance(n, ast.Attribute)}
            for node in ast.walk(stmt):
                issue = (_check_kernel_node(node, kernel.name, local, own | functions, others,
                                            aliases)
                         or _check_plain_global(node, kernel.name, local, plain, roots, aliases)
                         or _check_kernel_value(node, kernel.name, roots, aliases))
                if issue:
                    return issue
    return None


def _check_jit_names_bound_once(tree: ast.Module, own: set[str]) -> StaticIssue | None:
    """A kernel calls whatever its module holds under a name when it runs. A jit
    function's name bound again (a second `def`, a class, a loop variable) handed kernels
    plain Python, which computed the softmax in numpy on the loaded block's array under the
    CPU interpreter. Each name a kernel may call is bound once in the whole file."""
    lines: dict[str, list[int]] = {}
    for name, line in bindings(tree):
        if name in own:
            lines.setdefault(name, []).append(line)
    for name in sorted(own):
        if len(lines.get(name, [])) > 1:
            at = ", ".join(str(n) for n in sorted(lines[name]))
            return StaticIssue(reasons.FORBIDDEN_CONSTRUCT,
                               f"`{name}` names a @triton.jit function and is bound again "
                               f"(lines {at}): a kernel would call whatever it holds last; "
                               "give each function its own name", sorted(lines[name])[1])
    return None


# what a loaded block holds under the CPU interpreter (`x.handle.data` is a numpy array:
# numpy or torch could compute on it in place, with no triton op)
INTERPRETER_INTERNALS = {"handle", "data"}


@functools.cache
def block_methods() -> frozenset[str]:
    """The public methods of what a kernel's locals hold: blocks, TMA descriptors,
    constexprs (and a jit function's `fn(...)` is a call by name, not a method)."""
    import triton.language as tl

    kinds = [tl.tensor, tl.constexpr, getattr(tl, "tensor_descriptor", tl.tensor)]
    return frozenset(n for kind in kinds for n in dir(kind) if not n.startswith("_"))


def _check_kernel_value(node: ast.AST, kernel: str, roots: set[int],
                        aliases: dict[str, str]) -> StaticIssue | None:
    """`(torch.softmax,)[0](...)` in a kernel body called torch on the numpy array
    under a loaded block: calls only by name or dotted name, no other module than triton's
    (and `math`'s constants) as a value, no interpreter internals."""
    line = getattr(node, "lineno", 0)
    where = f"in the Triton kernel `{kernel}`"
    if isinstance(node, ast.Call) and not isinstance(node.func, ast.Name | ast.Attribute):
        return StaticIssue(reasons.FORBIDDEN_CALL, f"`{ast.unparse(node.func)}()` {where}: a "
                           "kernel calls functions by their name", line)
    if (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in aliases
            and not (aliases[node.id] + ".").startswith("triton.")
            and not (aliases[node.id] == "math" and id(node) in roots)
            and not aliases[node.id].startswith("math.")):  # `from math import pi`
        return StaticIssue(reasons.FORBIDDEN_CONSTRUCT, f"`{node.id}` ({aliases[node.id]}) "
                           f"{where}: a kernel uses triton, not other modules", line)
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name) and node.func.value.id not in aliases
            and node.func.attr not in block_methods()):
        # `S.copy_(X.softmax(1))` on a tensor handed over as a constexpr
        return StaticIssue(reasons.FORBIDDEN_CALL, f"`{ast.unparse(node.func)}()` {where}: "
                           "a block's methods are triton's (`x.to`, `x.reshape`, ...)", line)
    if isinstance(node, ast.Attribute) and node.attr in INTERPRETER_INTERNALS:
        return StaticIssue(reasons.FORBIDDEN_ATTRIBUTE, f"`.{node.attr}` {where}: a block's "
                           "internals (under the interpreter, the array itself)", line)
    return None


def _check_parameter_notes(kernel: ast.FunctionDef, aliases: dict[str, str],
                           rebound: frozenset[str]) -> StaticIssue | None:
    """A kernel parameter's annotation is triton's (`tl.constexpr`, a dtype), a plain type
    or a string: Triton prints it while it builds the kernel (an object's
    `__str__` ran there, unwatched)."""
    args = kernel.args
    for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
        note = arg.annotation
        if note is None or (isinstance(note, ast.Constant) and isinstance(note.value, str)):
            continue
        if isinstance(note, ast.Name) and note.id in {"int", "float", "bool", "str"} \
                and note.id not in rebound:
            continue
        if (_import_path(note, aliases, rebound) or "").startswith("triton."):
            continue
        return StaticIssue(reasons.FORBIDDEN_CONSTRUCT,
                           f"the annotation `{ast.unparse(note)}` of `{arg.arg}` in the Triton "
                           f"kernel `{kernel.name}`: tl.constexpr, a triton dtype, int/float/"
                           "bool/str or a string", arg.lineno)
    return None


PLAIN_VALUES = (int, float, complex, str, bytes, bool, type(None))


def _global_kinds(tree: ast.Module, aliases: dict[str, str],
                  constants: set[str]) -> tuple[set[str], set[str]]:
    """The module constants a kernel may not read, and those it may call. Triton's compiler
    lets a kernel read a global only when it is a `tl.constexpr`, a triton dtype, function or
    module, or a jit function ("Cannot access global variable SQRT_2 from within @jit'ed
    function"); a plain number or string (`SQRT_2 = math.sqrt(2.0)`, `BLOCK = 1024`) is
    refused on a GPU, and the CPU interpreter would run it. A name bound to a triton function
    (`triton_tanh = libdevice.tanh`, `triton_cast = tl.cast`) is that function: callable."""
    counts = _bindings(tree)
    rebound = frozenset(counts)
    triton_valued: set[str] = set()
    functions: set[str] = set()
    for node in tree.body:
        if not isinstance(node, ast.Assign | ast.AnnAssign) or node.value is None:
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        names = [t.id for t in targets if isinstance(t, ast.Name) and t.id in constants
                 and counts[t.id] == 1]
        if names and _triton_valued(node.value, aliases, rebound, frozenset(triton_valued)):
            triton_valued.update(names)
            path = _import_path(node.value, aliases, rebound) or ""
            value = resolve(path) if path.startswith("triton.language") else None
            if callable(value) and not isinstance(value, type):
                functions.update(names)
    return set(constants) - triton_valued, functions


def _triton_valued(value: ast.expr, aliases: dict[str, str], rebound: frozenset[str],
                   known: frozenset[str]) -> bool:
    """``tl.constexpr(...)``, ``tl.float32``, ``libdevice.tanh``, ``tl.float64 if F64 else
    tl.float32``, arithmetic on a constexpr (``known``: names already found so)."""
    def valued(v: ast.expr) -> bool:
        return _triton_valued(v, aliases, rebound, known)

    if isinstance(value, ast.Call):
        path = _import_path(value.func, aliases, rebound) or ""
        return path.startswith("triton.") and path.endswith(".constexpr")
    if isinstance(value, ast.Name) and value.id in known:
        return True
    if isinstance(value, ast.Attribute | ast.Name):
        path = _import_path(value, aliases, rebound) or ""
        return path.startswith("triton.") and not isinstance(resolve(path), PLAIN_VALUES)
    if isinstance(value, ast.IfExp):
        return valued(value.body) and valued(value.orelse)
    if isinstance(value, ast.BinOp):
        return valued(value.left) or valued(value.right)
    if isinstance(value, ast.UnaryOp):
        return valued(value.operand)
    return False


def _check_plain_global(node: ast.AST, kernel: str, local: set[str], plain: set[str],
                        roots: set[int], aliases: dict[str, str]) -> StaticIssue | None:
    """A kernel reading a plain number or string from the module (`SQRT_2`, or `pi` from
    `from math import pi`): refused by Triton's compiler on a GPU (`_global_kinds`)."""
    if not (isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)) or node.id in local:
        return None
    name = node.id
    if name in aliases and id(node) not in roots:
        if not isinstance(resolve(aliases[name]), PLAIN_VALUES):
            return None
    elif name not in plain:
        return None
    return StaticIssue(reasons.FORBIDDEN_CONSTRUCT,
                       f"`{name}` in the Triton kernel `{kernel}` is a plain module global: "
                       "Triton's compiler refuses it on a GPU (\"Cannot access global variable "
                       f"{name} from within @jit'ed function\"); make it a constexpr, "
                       f"`{name} = tl.constexpr(...)`, or pass it as an argument",
                       node.lineno)


def module_constants(tree: ast.Module, aliases: dict[str, str]) -> frozenset[str]:
    """Module-level names bound once, to a constant (``_is_constant``): what a kernel may
    read, or take as a parameter's default."""
    _, constants, others = _module_names(tree, aliases, jit_defs(tree, aliases))
    bindings = _bindings(tree)
    return frozenset(n for n in constants - others if bindings[n] == 1)


def _module_names(tree: ast.Module, aliases: dict[str, str],
                  kernels: list[ast.FunctionDef]) -> tuple[set[str], set[str], set[str]]:
    """The module's names as a kernel sees them: the jit functions (and names bound to
    them), the constants, and everything else."""
    own = {k.name for k in kernels}
    kernel_names = set(kernel_assignments(tree, aliases))
    constants: set[str] = set()
    others: set[str] = set()  # module-level names bound to anything else
    # names the file binds itself (`math = Evil()`, `float = Evil`): no longer the module or
    # builtin that `_is_constant` trusts; a constant bound once may name another one
    bindings = _bindings(tree)
    rebound = frozenset(bindings)
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = [t.id for t in targets if isinstance(t, ast.Name)]
            if isinstance(node.value, ast.Name) and node.value.id in own:
                own.update(names)  # `gelu = _gelu_tanh`
            elif any(n in kernel_names for n in names):
                own.update(names)  # `gelu = triton.jit(_gelu)`
            elif node.value is not None and _is_constant(
                    node.value, aliases, rebound,
                    frozenset(n for n in constants if bindings[n] == 1 and n not in aliases)):
                constants.update(names)
            elif node.value is not None:  # (`X: tl.constexpr` alone binds nothing)
                others.update(names)
        elif isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name not in own:
            others.add(node.name)
    return own, constants, others


def _is_constant(value: ast.expr, aliases: dict[str, str], rebound: frozenset[str],
                 known: frozenset[str] = frozenset()) -> bool:
    """``1024``, ``2 ** 10``, ``-1.0``, ``"fp32"``, ``tl.constexpr(64)``, ``tl.float32``,
    ``math.pi``, ``math.log2(math.e)``, ``float("-inf")``, ``torch.finfo(torch.float32).eps``,
    ``tl.constexpr(BLOCK // 2)`` (``known``: constants bound once above): what a kernel may
    read from the module. (A math function or ``float``/``int`` of constants returns a
    number; of an object it could return that object, so only constants go in.)"""
    def const(v: ast.expr) -> bool:
        return _is_constant(v, aliases, rebound, known)

    if isinstance(value, ast.Constant):
        return True
    if isinstance(value, ast.UnaryOp):
        return const(value.operand)
    if isinstance(value, ast.BinOp):
        return const(value.left) and const(value.right)
    if isinstance(value, ast.IfExp):  # `tl.float64 if ACC_FP64 else tl.float32`
        return const(value.test) and const(value.body) and const(value.orelse)
    if isinstance(value, ast.Compare):
        return const(value.left) and all(map(const, value.comparators))
    if isinstance(value, ast.BoolOp):
        return all(map(const, value.values))
    if isinstance(value, ast.Call) and not value.keywords and all(map(const, value.args)):
        func = value.func
        if isinstance(func, ast.Name) and func.id in {"float", "int"}:
            return func.id not in rebound
        path = _import_path(func, aliases, rebound) or ""
        if path in HOST_FACTS and not value.args:  # a bool or an int about the machine
            return True
        return path.startswith("math.") or (path.startswith("triton.")
                                            and path.endswith(".constexpr"))
    if isinstance(value, ast.Name) and value.id in known:
        return True
    if (isinstance(value, ast.Attribute) and value.attr in FINFO_NUMBERS
            and isinstance(value.value, ast.Call) and not value.value.keywords
            and _import_path(value.value.func, aliases, rebound) in ("torch.finfo", "torch.iinfo")
            and all((_import_path(a, aliases, rebound) or "").startswith("torch.")
                    and isinstance(a, ast.Attribute) for a in value.value.args)):
        return True  # torch.finfo(torch.float32).eps: a number
    if isinstance(value, ast.Attribute | ast.Name):  # a triton dtype or constant, math.pi
        path = _import_path(value, aliases, rebound) or ""
        return path.startswith(("math.", "triton."))
    return False


def constant_expression(node: ast.expr, tree: ast.Module, aliases: dict[str, str],
                        known: frozenset[str]) -> bool:
    """A kernel parameter's default built of constants (`2 ** 10`, `float("-inf")`), with
    the names the file rebinds (`float = Evil`) not taken for what they were."""
    return isinstance(node, ast.BinOp | ast.UnaryOp | ast.Call) and _is_constant(
        node, aliases, frozenset(_bindings(tree)), known)


def _import_path(node: ast.expr, aliases: dict[str, str], rebound: frozenset[str]) -> str | None:
    """``tl.float32`` → ``triton.language.float32``, ``pi`` (from math) → ``math.pi``: a
    dotted name that starts at an import the file does not rebind."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in aliases or node.id in rebound:
        return None
    return ".".join([aliases[node.id], *reversed(parts)])


def _bindings(tree: ast.Module) -> Counter[str]:
    """How often the module scope binds each name other than by an import (assignments,
    loop and `with` targets, walrus, functions, classes). A function's parameters and locals
    are its own (`global` is banned): `BLOCK_SIZE` as a kernel parameter does not rebind the
    module's `BLOCK_SIZE`."""
    names: Counter[str] = Counter()
    pending: list[ast.AST] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names[node.name] += 1
            # decorators, defaults and bases run in the module scope; the body does not
            pending.extend([*node.decorator_list, *getattr(node, "bases", [])])
            if not isinstance(node, ast.ClassDef):
                pending.extend(d for d in [*node.args.defaults, *node.args.kw_defaults] if d)
            continue
        if isinstance(node, ast.Lambda):
            pending.extend(d for d in [*node.args.defaults, *node.args.kw_defaults] if d)
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            names[node.id] += 1
        pending.extend(c for c in ast.iter_child_nodes(node) if c is not None)
    return names


def _check_kernel_node(node: ast.AST, kernel: str, local: set[str], own: set[str],
                       others: set[str], aliases: dict[str, str]) -> StaticIssue | None:
    line = getattr(node, "lineno", 0)
    where = f"in the Triton kernel `{kernel}`"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        name = node.func.id
        if not (name in own or name in local or name in JIT_BUILTINS
                or aliases.get(name, "").startswith("triton.")):
            return StaticIssue(reasons.FORBIDDEN_CALL,
                               f"`{name}()` {where}: a kernel may call only triton functions "
                               "and other @triton.jit functions", line)
    elif isinstance(node, ast.Call):
        root = root_name(node.func)
        if root in aliases and not (aliases[root] + ".").startswith("triton."):
            return StaticIssue(reasons.FORBIDDEN_CALL,
                               f"`{ast.unparse(node.func)}()` {where}: a kernel may call only "
                               "triton functions", line)
    elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
        if node.id in others and node.id not in local:
            return StaticIssue(reasons.FORBIDDEN_CONSTRUCT,
                               f"`{node.id}` {where}: a kernel may read only module-level "
                               "constants (numbers, strings, tl.constexpr), not objects", line)
    return None


def root_name(node: ast.AST) -> str | None:
    while isinstance(node, ast.Attribute | ast.Subscript):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None
