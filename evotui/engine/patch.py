"""Turn a messy small-model answer into a full candidate program.

An answer may carry SEARCH/REPLACE blocks (applied to the parent), a whole program (fenced
or not), or a unified diff (hunks located by content, see ``udiff``); around them there may be ``<think>`` sections, prose, extra fences and
indentation drift. ``extract_program`` finds the program, applies what it must, and checks
that the result compiles and differs from the parent. It never raises on bad input: failures
come back as ``PatchResult(source=None, error=...)`` with a message fit for the user. An answer
that reads two ways (a SEARCH that matches twice, a full program and edits that disagree) is
rejected as ambiguous, never guessed.
"""

from __future__ import annotations

import ast
import builtins
import difflib
import re
import textwrap
import warnings
from dataclasses import dataclass

from evotui.engine.udiff import has_hunks, parse_unified_diff

PROGRAM_MARK = "class ModelNew"
# what makes a code block a whole program, per dialect: a Triton module defines ModelNew (at
# the top level, not in a comment) and imports what it uses, a CUDA C candidate
# (evotui/dialects/cuda) assigns CUDA_SOURCE and imports nothing
_MODEL_CLASS = re.compile(r"^class\s+ModelNew\b", re.MULTILINE)
_CUDA_SOURCE = re.compile(r"^CUDA_SOURCE\s*=", re.MULTILINE)
_IMPORT = re.compile(r"^(import|from)\s", re.MULTILINE)


def _is_program(code: str) -> bool:
    """A whole program, not a fragment: a bare ``class ModelNew`` without imports is a piece
    the model meant to go into the parent, and would fail to load on its own."""
    return bool(_CUDA_SOURCE.search(code)) or bool(
        _MODEL_CLASS.search(code) and _IMPORT.search(code))


PY_TAGS = {"", "python", "py", "python3", "py3", "triton"}

_THINK_BLOCK = re.compile(r"<(think|thinking)>.*?</\1>", re.IGNORECASE | re.DOTALL)
_THINK_OPEN = re.compile(r"<(?:think|thinking)>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</(?:think|thinking)>", re.IGNORECASE)
# markers with 3 or more signs (models miscount them), an optional colon; older aider wrote
# ORIGINAL/UPDATED
_SEARCH = re.compile(r"^\s*<{3,}\s*(SEARCH|ORIGINAL):?\s*$", re.IGNORECASE)
_DIVIDER = re.compile(r"^\s*={3,}\s*$")
_REPLACE = re.compile(r"^\s*>{3,}\s*(REPLACE|UPDATED):?\s*$", re.IGNORECASE)

# characters that look like spaces or quotes but are not Python: chat templates and models
# put non-breaking spaces in indentation and typographic quotes around strings
_LOOKALIKES = str.maketrans({"\u00a0": " ", "\u202f": " ", "\u2007": " ", "\u2009": " ",
                             "\u200b": None, "\ufeff": None, "\u201c": '"', "\u201d": '"',
                             "\u2018": "'", "\u2019": "'"})
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*([\w+.#-]*)[^`]*$")


@dataclass(frozen=True)
class PatchResult:
    source: str | None
    mode: str  # "full" | "diff" | "none"
    error: str | None
    applied: int = 0

    @property
    def ok(self) -> bool:
        return self.source is not None


def strip_think(text: str) -> str:
    """Remove ``<think>…</think>`` (and ``<thinking>``) sections.

    Tolerant of two broken forms small models produce:
    - a stray ``</think>`` with no opening tag (the chat template opened it): everything
      before it is thinking and goes;
    - an ``<think>`` that is never closed: only the tag goes, the text after it stays, since
      the answer is often written there (the extractor then prefers the last complete block).
    """
    text = _THINK_BLOCK.sub("", text)
    closes = list(_THINK_CLOSE.finditer(text))
    if closes:
        text = text[closes[-1].end() :]
    return _THINK_OPEN.sub("", text)


def diff_text(a: str, b: str, a_name: str = "parent", b_name: str = "child") -> str:
    """A unified diff of two sources ('' when they are equal)."""

    def lines(s: str) -> list[str]:
        out = s.splitlines(keepends=True)
        if out and not out[-1].endswith("\n"):
            out[-1] += "\n"
        return out

    return "".join(difflib.unified_diff(lines(a), lines(b), fromfile=a_name, tofile=b_name))


# -- SEARCH/REPLACE ------------------------------------------------------------------------


@dataclass
class _Block:
    search: list[str]
    replace: list[str]
    near: int | None = None  # a unified diff's header line: picks among several matches


def _strip_fence_wrap(search: list[str], replace: list[str]) -> tuple[list[str], list[str]]:
    """Drop code fences wrapped around one side of a block (```python … ```), or one fence
    opened at the top of SEARCH and closed at the bottom of REPLACE."""

    def closes(line: str) -> bool:
        return line.strip().startswith(("```", "~~~"))

    def unwrap(lines: list[str]) -> list[str]:
        if len(lines) >= 2 and _FENCE.match(lines[0]) and closes(lines[-1]):
            return lines[1:-1]
        return lines

    search, replace = unwrap(search), unwrap(replace)
    if search and replace and _FENCE.match(search[0]) and closes(replace[-1]):
        return search[1:], replace[:-1]
    return search, replace


def _parse_blocks(text: str) -> tuple[list[_Block], str | None]:
    blocks: list[_Block] = []
    state, search, replace = "out", [], []
    for line in text.split("\n"):
        if state == "out":
            if _SEARCH.match(line):
                state, search, replace = "search", [], []
        elif state == "search":
            if _DIVIDER.match(line):
                state = "replace"
            elif _SEARCH.match(line) or _REPLACE.match(line):
                return (
                    blocks,
                    f"SEARCH/REPLACE block {len(blocks) + 1} is malformed: no ======= line",
                )
            else:
                search.append(line)
        elif _REPLACE.match(line):
            blocks.append(_Block(*_strip_fence_wrap(search, replace)))
            state = "out"
        elif _SEARCH.match(line):
            return (
                blocks,
                f"SEARCH/REPLACE block {len(blocks) + 1} is malformed: no >>>>>>> REPLACE line",
            )
        else:
            replace.append(line)
    if state != "out":
        return blocks, f"truncated: SEARCH/REPLACE block {len(blocks) + 1} is not closed"
    return blocks, None


def _indent(line: str) -> int:
    lead = line[: len(line) - len(line.lstrip())]
    return len(lead.expandtabs(4))


def _trim_blank(lines: list[str]) -> list[str]:
    start, end = 0, len(lines)
    while start < end and not lines[start].strip():
        start += 1
    while end > start and not lines[end - 1].strip():
        end -= 1
    return lines[start:end]


def _unquirked(line: str) -> str:
    return line.translate(_LOOKALIKES).rstrip()


def _find_exact(src: list[str], search: list[str]) -> list[int]:
    """Where ``search`` starts in ``src``: exact lines first, then lines equal ignoring
    trailing whitespace, then also ignoring look-alike spaces and quotes."""
    n = len(search)
    for norm in (lambda s: s, str.rstrip, _unquirked):
        want = [norm(s) for s in search]
        starts = [i for i in range(len(src) - n + 1)
                  if [norm(s) for s in src[i : i + n]] == want]
        if starts:
            return starts
    return []


def _find_shifted(src: list[str], search: list[str]) -> list[tuple[int, int, int]]:
    """Non-blank lines equal up to one consistent indentation shift (blank lines ignored on
    both sides): every (start, end, shift)."""
    body = [_unquirked(s) for s in search if s.strip()]
    code = [i for i, s in enumerate(src) if s.strip()]
    m = len(body)
    found = []
    for k in range(len(code) - m + 1):
        window = [_unquirked(src[i]) for i in code[k : k + m]]
        if any(w.strip() != b.strip() for w, b in zip(window, body, strict=True)):
            continue
        shifts = {_indent(w) - _indent(b) for w, b in zip(window, body, strict=True)}
        if len(shifts) == 1:
            found.append((code[k], code[k + m - 1] + 1, shifts.pop()))
    return found


_HEADER_SLACK = 5  # lines a diff header may be off and still pick one of several matches


class _Ambiguous(Exception):
    def __init__(self, starts: list[int]) -> None:
        super().__init__(starts)
        self.starts = starts


def _choose(starts: list[int], near: int | None) -> int:
    """The index into ``starts`` of the one match meant: the only one, or the one a diff
    header points at (unique nearest, within a few lines); else the block is ambiguous."""
    if len(starts) == 1:
        return 0
    if near is not None:
        dist = sorted((abs(s - near), k) for k, s in enumerate(starts))
        if dist[0][0] <= _HEADER_SLACK and dist[0][0] < dist[1][0]:
            return dist[0][1]
    raise _Ambiguous(starts)


def _reindent(lines: list[str], shift: int, tabs: bool) -> list[str]:
    """Shift indentation by ``shift`` columns, written in the parent's style (tabs/spaces)."""

    def lead(width: int) -> str:
        width = max(0, width)
        return "\t" * (width // 4) + " " * (width % 4) if tabs else " " * width

    return [lead(_indent(s) + shift) + s.lstrip() if s.strip() else "" for s in lines]


def _locations(src: list[str], block: _Block) -> list[tuple[int, int, list[str]]]:
    """Every place the block's SEARCH matches in ``src``: (start, end, lines to put there),
    at the strictest matching that finds any."""
    search, replace = block.search, block.replace
    for s, r in ((search, replace), (_trim_blank(search), _trim_blank(replace))):
        if starts := _find_exact(src, s):
            return [(i, i + len(s), r) for i in starts]
    return [(start, end, _reindent(_trim_blank(replace), shift, src[start].startswith("\t")))
            for start, end, shift in _find_shifted(src, search)]


def _apply_blocks(parent: str, blocks: list[_Block]) -> tuple[str | None, str | None]:
    src = parent.split("\n")
    k = 0
    while k < len(blocks):
        block, name = blocks[k], f"SEARCH/REPLACE block {k + 1} of {len(blocks)}"
        if not any(s.strip() for s in block.search):
            return None, f"{name} has an empty SEARCH section"
        first = next(s for s in block.search if s.strip()).strip()
        found = _locations(src, block)
        if not found:
            return None, f"{name} did not match the parent (its SEARCH starts with {first!r})"
        # the same block repeated once per place it matches: the model meant each place
        twins = 1
        while k + twins < len(blocks) and blocks[k + twins] == block:
            twins += 1
        disjoint = all(a[1] <= b[0] for a, b in zip(found, found[1:], strict=False))
        if len(found) > 1 and twins == len(found) and disjoint and block.near is None:
            chosen = found
        else:
            try:
                chosen, twins = [found[_choose([f[0] for f in found], block.near)]], 1
            except _Ambiguous as e:
                where = ", ".join(str(i + 1) for i in e.starts)
                return None, (f"{name} is ambiguous: it matches {len(e.starts)} places, lines "
                              f"{where} (its SEARCH starts with {first!r})")
        for start, end, lines in reversed(chosen):
            src = src[:start] + lines + src[end:]
        k += twins
    return "\n".join(src), None


# -- fenced code ---------------------------------------------------------------------------


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
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, lang = m.group(1), m.group(2).lower()
        indent = _indent(lines[i])
        body: list[str] = []
        i += 1
        closed = False
        while i < len(lines):
            s = lines[i].strip()
            # a fence indented deeper than its opening (by 4 or more, as in Markdown) is
            # part of the code: a docstring's own example block
            if (s.startswith(fence[0] * len(fence)) and not s.strip(fence[0])
                    and _indent(lines[i]) <= indent + 3):
                closed = True
                i += 1
                break
            body.append(lines[i])
            i += 1
        # a fence inside a Markdown list is indented, and so is its code
        blocks.append(_Fenced(lang, textwrap.dedent("\n".join(body)), closed))
    return blocks


def _syntax_error(source: str) -> str | None:
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


def _parsable(code: str) -> str | None:
    """``code``, or the same with look-alike spaces and quotes made ASCII when only that
    makes it parse; None when neither parses. (Made ASCII only when needed: a typographic
    quote inside a string literal is legitimate.)"""
    if _syntax_error(code) is None:
        return code
    plain = code.translate(_LOOKALIKES)
    return plain if plain != code and _syntax_error(plain) is None else None


def _program_blocks(text: str) -> list[_Fenced]:
    return [b for b in _fenced_blocks(text) if b.closed and _is_program(b.code)]


def _full_program(text: str, parent: str) -> tuple[str | None, str | None]:
    blocks = _fenced_blocks(text)
    if not blocks:
        bare = _unfenced_program(text)
        if bare is not None:
            return bare, None
        return None, "no code in the reply"
    last = blocks[-1]
    # an empty unclosed block is a stray fence after the answer, not a cut-off program
    if not last.closed and last.code.strip() and (last.lang in PY_TAGS or _is_program(last.code)):
        return None, "truncated: the last code block is not closed (the answer was cut off)"
    candidates = [b for b in blocks if b.closed and _is_program(b.code)]
    if not candidates:
        langs = sorted({b.lang or "untagged" for b in blocks})
        return None, (
            f"no full program: {len(blocks)} code block(s) ({', '.join(langs)}) but none "
            f"defines `{PROGRAM_MARK}` with its imports"
        )
    programs = [code for b in candidates if (code := _parsable(b.code)) is not None]
    # the last complete one that parses; a copy of the parent quoted for reference is no
    # proposal, wherever it stands
    changed = [code for code in programs if not _same(code, parent)]
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
            if _is_program(code) and (parsed := _parsable(code)) is not None:
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


def _same(a: str, b: str) -> bool:
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


def _elided(program: str, parent: str) -> str | None:
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


def _apply_unified_diff(text: str, parent: str) -> tuple[str | None, str | None, int]:
    """The parent with the reply's unified diff hunks applied: (source, error, hunks)."""
    blocks, shift = [], 0
    for search, replace, near in parse_unified_diff(text):
        # the header numbers the parent's lines; earlier hunks have moved them
        blocks.append(_Block(search, replace, None if near is None else near + shift))
        shift += len(replace) - len(search)
    source, error = _apply_blocks(parent, blocks) if blocks else (None, "empty diff")
    if error is not None:
        error = error.replace("SEARCH/REPLACE block", "diff hunk").replace(
            "its SEARCH starts", "its context starts").replace(
            "an empty SEARCH section", "no context or removed lines")
    return source, error, len(blocks)


def _disagreement(text: str, edited: str, parent: str, edits: str) -> str | None:
    """Why the reply is ambiguous when it also holds a whole program (not a copy of the
    parent) that differs from the parent with its edits applied; None when it does not."""
    for block in _program_blocks(text):
        code = _parsable(block.code)
        if code is not None and not _same(code, parent) and not _same(code, edited):
            return (f"ambiguous: the reply has both a full program and {edits} that give a "
                    "different program")
    return None


def extract_program(reply: str, parent_source: str) -> PatchResult:
    """The child program a reply describes, or why there is none."""
    text = strip_think(reply.replace("\r\n", "\n").replace("\r", "\n"))
    parent = parent_source.replace("\r\n", "\n")
    if any(_SEARCH.match(line) for line in text.split("\n")):
        mode = "diff"
        blocks, error = _parse_blocks(text)
        if error is None and has_hunks(text):
            error = "ambiguous: the reply mixes SEARCH/REPLACE blocks and a unified diff"
        if error is None:
            source, error = _apply_blocks(parent, blocks)
        if error is None and source is not None:
            error = _disagreement(text, source, parent, "SEARCH/REPLACE blocks")
        applied = len(blocks)
    else:
        mode = "full"
        source, error = _full_program(text, parent)
        applied = 0
        unusable = source is None or _syntax_error(source) is not None
        if has_hunks(text) and unusable:
            mode = "diff"
            source, error, applied = _apply_unified_diff(text, parent)
        elif has_hunks(text):
            edited, diff_error, hunks = _apply_unified_diff(text, parent)
            if diff_error is None and edited is not None and not _same(edited, source):
                mode = "diff"
                if _same(source, parent):  # the parent quoted, then the change as a diff
                    source, applied = edited, hunks
                else:
                    error = ("ambiguous: the reply has both a full program and a unified diff "
                             "that give a different program")
        elif source is not None and (missing := _elided(source, parent)):
            mode, error = "none", (f"no full program: the code uses {missing} but does not "
                                   "define it (left out as unchanged?)")
        if error == "no code in the reply" or (error or "").startswith("no full program"):
            mode = "none"
    if error is not None or source is None:
        return PatchResult(None, mode, error or "no program", 0)
    source = (_parsable(source) or source).strip("\n") + "\n"
    if (err := _syntax_error(source)) is not None:
        return PatchResult(None, mode, err, 0)
    if _same(source, parent):
        return PatchResult(None, mode, "no change", 0)
    return PatchResult(source, mode, None, applied)
