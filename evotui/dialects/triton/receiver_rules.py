"""Who `self` and `ctx` are, for the rules that let a candidate assign through them (part
of static_rules.check_source). `self.x = v` patches nothing only when `self` is an instance
of the file's own class; a method called through its class with `torch.Tensor` as
`self` (and an autograd Function's `ctx` as `torch.Tensor`) and set `Tensor.new_empty`.
"""

from __future__ import annotations

import ast

from evotui.core import reasons
from evotui.dialects.base import StaticIssue
from evotui.dialects.triton.ast_paths import dotted
from evotui.dialects.triton.scope_rules import bindings

# the bases a candidate's class may have besides its own classes (static_rules), and so what
# a constructor chain may name (`nn.Module.__init__`)
CONSTRUCTOR_PREFIXES = ("torch.nn.", "typing.", "enum.", "collections.")


AUTOGRAD_FUNCTION = "torch.autograd.Function"


def ctx_fields(tree: ast.Module, aliases: dict[str, str]) -> frozenset[int]:
    """`ctx.eps = eps` in a method of an autograd Function whose first parameter is `ctx`:
    the ids of those targets (the context object is the method's own, as `self` is)."""
    ids: set[int] = set()
    applied = {id(n.value) for n in ast.walk(tree)
               if isinstance(n, ast.Attribute) and n.attr == "apply"}
    for cls in ast.walk(tree):
        if not (isinstance(cls, ast.ClassDef)
                and any(dotted(b, aliases) == AUTOGRAD_FUNCTION for b in cls.bases)):
            continue
        if any(isinstance(n, ast.Name) and n.id == cls.name and id(n) not in applied
               for n in ast.walk(tree)):
            # used other than as `Cls.apply(...)`: `Cls.forward(torch.Tensor, ...)` would make
            # `ctx` any object, and `ctx.detach = f` a patch
            continue
        names = {n.name for n in cls.body if isinstance(n, ast.FunctionDef)}
        if names & {"setup_context", "apply"}:
            # with `setup_context`, torch calls `forward` without a context (its first
            # argument is whatever `.apply` got); an own `apply` is any method
            continue
        for fn in cls.body:
            args = fn.args.posonlyargs + fn.args.args if isinstance(fn, ast.FunctionDef) else []
            if not args or args[0].arg != "ctx" or fn.name not in ("forward", "backward"):
                continue
            if sum(name == "ctx" for name, _ in bindings(fn)) > 1:
                # `ctx = cls`, a nested `def put(ctx, f)`, `for ctx in ...`: another object
                continue  # (`ctx.detach = f` patched torch.Tensor)
            for node in ast.walk(fn):
                if (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
                        and isinstance(node.value, ast.Name) and node.value.id == "ctx"):
                    ids.add(id(node))
    return frozenset(ids)


def trusted_selves(tree: ast.Module) -> frozenset[int]:
    """The `self` names that are an instance of the file's own class: inside a method defined
    directly in a class body, not a static or class method, whose first parameter is `self`
    and is never rebound (a top-level `def put(self, f): self.x = f` called on
    torch.Tensor patched it). Calling such a method through the class with another first
    argument is refused (static_rules)."""
    ids: set[int] = set()
    for cls in ast.walk(tree):
        if not isinstance(cls, ast.ClassDef):
            continue
        for fn in cls.body:
            if not is_instance_method(fn):
                continue
            for node in ast.walk(fn):
                if isinstance(node, ast.Name) and node.id == "self":
                    ids.add(id(node))
    return frozenset(ids)


def is_instance_method(fn: ast.stmt) -> bool:
    if not isinstance(fn, ast.FunctionDef):
        return False
    args = fn.args.posonlyargs + fn.args.args
    decorators = {d.id for d in fn.decorator_list if isinstance(d, ast.Name)}
    return (bool(args) and args[0].arg == "self" and not decorators & {"staticmethod", "classmethod"}
            and sum(name == "self" for name, _ in bindings(fn)) == 1)


def trusted_root(target: ast.expr, trusted: frozenset[int] | None) -> bool:
    """`self.x = v` (or `self.x[k] = v`) with `self` an instance of the file's own class."""
    while isinstance(target, ast.Attribute | ast.Subscript):
        target = target.value
    return (isinstance(target, ast.Name) and target.id == "self"
            and (trusted is None or id(target) in trusted))


def check_unbound_method_calls(tree: ast.Module, trusted: frozenset[int]) -> StaticIssue | None:
    """`Own.method(obj, ...)` runs the method with `self` = obj (`Patch.put(
    torch.Tensor, f)` set `torch.Tensor.new_empty`): an instance method read through its
    class only as a call on `self` (`Base.__init__(self)`, `Base.forward(self, x)`)."""
    methods: dict[str, set[str]] = {}
    for cls in ast.walk(tree):
        if isinstance(cls, ast.ClassDef):
            methods[cls.name] = {fn.name for fn in cls.body if is_instance_method(fn)}
    on_self = {id(c.func) for c in ast.walk(tree) if isinstance(c, ast.Call) and c.args
               and isinstance(c.args[0], ast.Name) and id(c.args[0]) in trusted}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                and node.attr in methods.get(node.value.id, ()) and id(node) not in on_self):
            return StaticIssue(reasons.FORBIDDEN_CONSTRUCT,
                               f"`{ast.unparse(node)}` read through its class: call methods on "
                               "an instance (through the class only as `Base.method(self, ...)`)",
                               node.lineno)
    return None


def own_init(receiver: ast.expr, aliases: dict[str, str], own_classes: set[str]) -> bool:
    """`super().__init__`, `nn.Module.__init__`, `OwnBase.__init__`: a constructor chain."""
    if (isinstance(receiver, ast.Call) and isinstance(receiver.func, ast.Name)
            and receiver.func.id == "super"):
        return True
    if isinstance(receiver, ast.Name) and receiver.id in own_classes:
        return True
    return (dotted(receiver, aliases) or "").startswith(CONSTRUCTOR_PREFIXES)
