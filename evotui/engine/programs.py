"""Finding a whole program in a model's reply: the last complete fenced block that defines
``ModelNew`` (or a CUDA C candidate's ``CUDA_SOURCE``) and parses, or a program written
without a fence between lines of prose; and telling when one leaves out parts of the parent
("# ... unchanged").
"""

from __future__ import annotations

import ast
import builtins
import re
import textwrap
import warnings
from dataclasses import dataclass

from evotui.engine.edits import FENCE, LOOKALIKES, indent_width

PROGRAM_MARK = "class ModelNew"
# what makes a code block a whole program, per dialect: a Triton module defines ModelNew (at
# the top level, not in a comment) and imports what it uses, a CUDA C candidate
# (evotui/dialects/cuda) assigns CUDA_SOURCE and imports nothing
_MODEL_CLASS = re.compile(r"^class\s+ModelNew\b", re.MULTILINE)
_CUDA_SOURCE = re.compile(r"^CUDA_SOURCE\s*=", re.MULTILINE)
_IMPORT = re.compile(r"^(import|from)\s", re.MULTILINE)


def is_program(code: str) -> bool:
    """A whole program, not a fragment: a bare ``class ModelNew`` without imports is a piece
    the model meant to go into the parent, and would fail to load on its own."""
    return bool(_CUDA_SOURCE.search(code)) or bool(
        _MODEL_CLASS.search(code) and _IMPORT.search(code))


PY_TAGS = {"", "python", "py", "python3", "py3", "triton"}


@dataclass
class _Fenced:
    lang: str
    code: str
    closed: bool


def _fenced_blocks(text: str) -> list[_Fenced]:
    blocks: list[_Fenced] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, lang = m.group(1), m.group(2).lower()
        indent = indent_width(lines[i])
        body: list[str] = []
        i += 1
        closed = False
        while i < len(lines):
            s = lines[i].strip()
            # a fence indented deeper than its opening (by 4 or more, as in Markdown) is
            # part of the code: a docstring's own example block
            if (s.startswith(fence[0] * len(fence)) and not s.strip(fence[0])
                    and indent_width(lines[i]) <= indent + 3):
                closed = True
                i += 1
                break
            body.append(lines[i])
            i += 1
        # a fence inside a Markdown list is indented, and so is its code
        blocks.append(_Fenced(lang, textwrap.dedent("\n".join(body)), closed))
    return blocks


def syntax_error(source: str) -> str | None:
    try:
        # compiled, not only parsed: ``return`` at the top level (a dedent gone wrong)
        # parses but does not compile
        with warnings.catch_warnings():  # the evaluator reports those, not the extractor
            warnings.simplefilter("ignore")
            compile(source, "<candidate>", "exec", dont_inherit=True)
    except SyntaxError as e:
        return f"syntax error: {e.msg}" + (f" (line {e.lineno})" if e.lineno else "")
    except ValueError as e:  # e.g. null bytes
        return f"syntax error: {e}"
    return None


def parsable(code: str) -> str | None:
    """``code``, or the same with look-alike spaces and quotes made ASCII when only that
    makes it parse; None when neither parses. (Made ASCII only when needed: a typographic
    quote inside a string literal is legitimate.)"""
    if syntax_error(code) is None:
        return code
    plain = code.translate(LOOKALIKES)
    return plain if plain != code and syntax_error(plain) is None else None


def program_blocks(text: str) -> list[_Fenced]:
    return [b for b in _fenced_blocks(text) if b.closed and is_program(b.code)]


def full_program(text: str, parent: str) -> tuple[str | None, str | None]:
    blocks = _fenced_blocks(text)
    if not blocks:
        bare = _unfenced_program(text)
        if bare is not None:
            return bare, None
        return None, "no code in the reply"
    last = blocks[-1]
    # an empty unclosed block is a stray fence after the answer, not a cut-off program
    if not last.closed and last.code.strip() and (last.lang in PY_TAGS or is_program(last.code)):
        return None, "truncated: the last code block is not closed (the answer was cut off)"
    candidates = [b for b in blocks if b.closed and is_program(b.code)]
    if not candidates:
        langs = sorted({b.lang or "untagged" for b in blocks})
        return None, (
            f"no full program: {len(blocks)} code block(s) ({', '.join(langs)}) but none "
            f"defines `{PROGRAM_MARK}` with its imports"
        )
    programs = [code for b in candidates if (code := parsable(b.code)) is not None]
    # the last complete one that parses; a copy of the parent quoted for reference is no
    # proposal, wherever it stands
    changed = [code for code in programs if not same_program(code, parent)]
    if changed or programs:
        return (changed or programs)[-1], None
    return candidates[-1].code, None  # fails below with its syntax error


_CODE_START = re.compile(r"^(import |from \S+ import |\"\"\"|\'\'\'|#|@triton|CUDA_SOURCE\b)")
_MAX_TRAILING_PROSE = 40  # lines of prose after an unfenced program that are tried away


def _unfenced_program(text: str) -> str | None:
    """A program written without a fence, possibly between lines of prose: from the first
    line that starts a module — or, when that is a ``#`` line (a Markdown heading looks the
    same), from the first import / docstring / decorator — to the last line that still
    leaves it parsing, without trailing one-word lines ("Done")."""
    lines = text.strip().split("\n")
    first = next((i for i, line in enumerate(lines) if _CODE_START.match(line)), None)
    module = next((i for i, line in enumerate(lines)
                   if _CODE_START.match(line) and not line.startswith("#")), None)
    for start in dict.fromkeys(i for i in (first, module) if i is not None):
        body = lines[start:]
        # only trailing prose may go: unindented lines that start no statement (never code,
        # or an unfinished program would come back cut to a part that parses)
        prose = 0
        while prose < min(_MAX_TRAILING_PROSE, len(body) - 1) and _looks_like_prose(body[-1 - prose]):
            prose += 1
        for cut in range(prose + 1):
            code = "\n".join(body[: len(body) - cut]).strip()
            if is_program(code) and (parsed := parsable(code)) is not None:
                return _without_trailing_words(parsed)
    return None


_STATEMENT = re.compile(r"^(def|class|async|@|import|from|if|for|while|with|try|return|[A-Za-z_]\w*\s*[=(\[.])")


def _looks_like_prose(line: str) -> bool:
    return not line.strip() or (not line[0].isspace() and not _STATEMENT.match(line))


def _without_trailing_words(code: str) -> str:
    """Drop trailing top-level statements that are a bare name or number: prose that parses."""
    lines = code.split("\n")
    tree = ast.parse(code)
    while tree.body and isinstance(tree.body[-1], ast.Expr) and isinstance(
            tree.body[-1].value, ast.Name | ast.Constant) and not (
            isinstance(tree.body[-1].value, ast.Constant) and isinstance(tree.body[-1].value.value, str)):
        lines = lines[: tree.body[-1].lineno - 1]
        tree.body.pop()
    return "\n".join(lines).rstrip()


def same_program(a: str, b: str) -> bool:
    def norm(s: str) -> list[str]:
        return [line.rstrip() for line in s.strip("\n").split("\n")]

    return norm(a) == norm(b)


def _bound_and_used(tree: ast.AST) -> tuple[set[str], set[str]]:
    """Every name the code binds anywhere (any scope), and every name it reads."""
    bound: set[str] = set()
    used: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (used if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound, used


def _top_level_names(tree: ast.Module) -> set[str]:
    """What a module defines or imports at its top level."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        else:
            names |= _bound_and_used(node)[0]
    return names


def elided(program: str, parent: str) -> str | None:
    """A parent function or constant the program uses but no longer defines: the model
    wrote "# ... unchanged" in its place. None when nothing is missing."""
    try:
        tree, parent_tree = ast.parse(program), ast.parse(parent)
    except (SyntaxError, ValueError):
        return None
    if any(isinstance(n, ast.ImportFrom) and n.names[0].name == "*" for n in ast.walk(tree)):
        return None
    bound, used = _bound_and_used(tree)
    missing = (used - bound - set(dir(builtins))) & _top_level_names(parent_tree)
    return ", ".join(f"`{name}`" for name in sorted(missing)) or None


__all__ = ["PROGRAM_MARK", "PY_TAGS", "elided", "full_program", "is_program", "parsable",
           "program_blocks", "same_program", "syntax_error"]
