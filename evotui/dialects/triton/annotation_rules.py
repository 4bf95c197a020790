"""No code in strings: a string annotation is evaluated by whatever reads the type hints
(``typing.get_type_hints``, a dataclass field), so it may only be a name. Part of
static_rules.check_source.
"""

from __future__ import annotations

import ast

from evotui.core import reasons
from evotui.dialects.base import StaticIssue


def check_annotations(tree: ast.Module) -> StaticIssue | None:
    """No code in strings: a string annotation is evaluated by whatever reads the hints."""
    for node in ast.walk(tree):
        notes = []
        if isinstance(node, ast.arg | ast.AnnAssign):
            notes.append(node.annotation)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            notes.append(node.returns)
        for note in notes:
            if note is not None and not _harmless_annotation(note):
                return StaticIssue(reasons.FORBIDDEN_CONSTRUCT,
                                   "a string annotation that is more than a name (read back, "
                                   "it is evaluated as code)", getattr(note, "lineno", 0))
    return None


NAME_LIKE = (ast.Expression, ast.Name, ast.Load, ast.Attribute, ast.Subscript, ast.Tuple,
             ast.BinOp, ast.BitOr, ast.Constant)


def _harmless_annotation(note: ast.expr) -> bool:
    """Strings in an annotation: `Literal["row"]` values, or forward references that are
    names (`"ModelNew"`, `"torch.Tensor | None"`) — never calls or private attributes."""
    literal_values = {id(n) for sub in ast.walk(note) if isinstance(sub, ast.Subscript)
                      and ast.unparse(sub.value).split(".")[-1] == "Literal"
                      for n in ast.walk(sub.slice)}
    for node in ast.walk(note):
        if isinstance(node, ast.Call):
            # `x: b"...".decode()` makes a string annotation no string constant shows
            return False
        if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
            continue
        if id(node) in literal_values:
            continue
        try:
            ref = ast.parse(node.value, mode="eval")
        except SyntaxError:
            return False
        for part in ast.walk(ref):
            if not isinstance(part, NAME_LIKE) or (isinstance(part, ast.Attribute)
                                                   and part.attr.startswith("_")):
                return False
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                return False  # a string in the string: evaluated twice
    return True
