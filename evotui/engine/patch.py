"""Turn a messy small-model answer into a full candidate program.

An answer may carry SEARCH/REPLACE blocks (applied to the parent), a whole program (fenced
or not), or a unified diff (hunks located by content, see ``udiff``); around them there may be ``<think>`` sections, prose, extra fences and
indentation drift. ``extract_program`` finds the program, applies what it must, and checks
that the result parses and differs from the parent. It never raises on bad input: failures
come back as ``PatchResult(source=None, error=...)`` with a message fit for the user.
"""

from __future__ import annotations

import ast
import difflib
import re
from dataclasses import dataclass

from evotui.engine.udiff import has_hunks, parse_unified_diff

PROGRAM_MARK = "class ModelNew"
# what makes a code block a whole program, per dialect: a Triton module defines ModelNew, a
# CUDA C candidate (backends/cuda_backend) assigns CUDA_SOURCE
PROGRAM_MARKS = (PROGRAM_MARK, "CUDA_SOURCE =")


def _is_program(code: str) -> bool:
    return any(mark in code for mark in PROGRAM_MARKS)
PY_TAGS = {"", "python", "py", "python3", "py3", "triton"}

_THINK_BLOCK = re.compile(r"<(think|thinking)>.*?</\1>", re.IGNORECASE | re.DOTALL)
_THINK_OPEN = re.compile(r"<(?:think|thinking)>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</(?:think|thinking)>", re.IGNORECASE)
_SEARCH = re.compile(r"^\s*<{5,}\s*(SEARCH|ORIGINAL)\s*$", re.IGNORECASE)  # older aider: ORIGINAL
_DIVIDER = re.compile(r"^\s*={5,}\s*$")
_REPLACE = re.compile(r"^\s*>{5,}\s*(REPLACE|UPDATED)\s*$", re.IGNORECASE)
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


def _strip_fence_wrap(lines: list[str]) -> list[str]:
    """Drop a code fence wrapped around one side of a block (```python … ```)."""
    if len(lines) >= 2 and _FENCE.match(lines[0]) and lines[-1].strip().startswith(("```", "~~~")):
        return lines[1:-1]
    return lines


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
            blocks.append(_Block(_strip_fence_wrap(search), _strip_fence_wrap(replace)))
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


def _find_exact(src: list[str], search: list[str], near: int | None = None
                ) -> tuple[int, int] | None:
    """Exact lines first, then lines equal ignoring trailing whitespace; of several matches
    the first, or the one nearest line ``near``."""
    n = len(search)
    for norm in (lambda s: s, str.rstrip):
        want = [norm(s) for s in search]
        starts = [i for i in range(len(src) - n + 1)
                  if [norm(s) for s in src[i : i + n]] == want]
        if starts:
            i = starts[0] if near is None else min(starts, key=lambda k: abs(k - near))
            return i, i + n
    return None


def _find_shifted(src: list[str], search: list[str]) -> tuple[int, int, int] | None:
    """Non-blank lines equal up to one consistent indentation shift (blank lines ignored on
    both sides): (start, end, shift) or None."""
    body = [s for s in search if s.strip()]
    code = [i for i, s in enumerate(src) if s.strip()]
    m = len(body)
    for k in range(len(code) - m + 1):
        window = [src[i] for i in code[k : k + m]]
        if any(w.strip() != b.strip() for w, b in zip(window, body, strict=True)):
            continue
        shifts = {_indent(w) - _indent(b) for w, b in zip(window, body, strict=True)}
        if len(shifts) == 1:
            return code[k], code[k + m - 1] + 1, shifts.pop()
    return None


def _reindent(lines: list[str], shift: int, tabs: bool) -> list[str]:
    """Shift indentation by ``shift`` columns, written in the parent's style (tabs/spaces)."""

    def lead(width: int) -> str:
        width = max(0, width)
        return "\t" * (width // 4) + " " * (width % 4) if tabs else " " * width

    return [lead(_indent(s) + shift) + s.lstrip() if s.strip() else "" for s in lines]


def _apply_one(src: list[str], block: _Block) -> list[str] | None:
    search, replace = block.search, block.replace
    for s, r in ((search, replace), (_trim_blank(search), _trim_blank(replace))):
        if found := _find_exact(src, s, block.near):
            return src[: found[0]] + r + src[found[1] :]
    if found := _find_shifted(src, search):
        start, end, shift = found
        tabs = src[start].startswith("\t")
        return src[:start] + _reindent(_trim_blank(replace), shift, tabs) + src[end:]
    return None


def _apply_blocks(parent: str, blocks: list[_Block]) -> tuple[str | None, str | None]:
    src = parent.split("\n")
    for k, block in enumerate(blocks, 1):
        if not any(s.strip() for s in block.search):
            return None, f"SEARCH/REPLACE block {k} of {len(blocks)} has an empty SEARCH section"
        patched = _apply_one(src, block)
        if patched is None:
            first = next(s for s in block.search if s.strip()).strip()
            return None, (
                f"SEARCH/REPLACE block {k} of {len(blocks)} did not match the parent "
                f"(its SEARCH starts with {first!r})"
            )
        src = patched
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
        body: list[str] = []
        i += 1
        closed = False
        while i < len(lines):
            s = lines[i].strip()
            if s.startswith(fence[0] * len(fence)) and not s.strip(fence[0]):
                closed = True
                i += 1
                break
            body.append(lines[i])
            i += 1
        blocks.append(_Fenced(lang, "\n".join(body), closed))
    return blocks


def _syntax_error(source: str) -> str | None:
    try:
        ast.parse(source)
    except SyntaxError as e:
        return f"syntax error: {e.msg} (line {e.lineno})"
    except ValueError as e:  # e.g. null bytes
        return f"syntax error: {e}"
    return None


def _full_program(text: str) -> tuple[str | None, str | None]:
    blocks = _fenced_blocks(text)
    if not blocks:
        bare = _unfenced_program(text)
        if bare is not None:
            return bare, None
        return None, "no code in the reply"
    last = blocks[-1]
    if not last.closed and (last.lang in PY_TAGS or _is_program(last.code)):
        return None, "truncated: the last code block is not closed (the answer was cut off)"
    candidates = [b for b in blocks if b.closed and _is_program(b.code)]
    if not candidates:
        langs = sorted({b.lang or "untagged" for b in blocks})
        return None, (
            f"no full program: {len(blocks)} code block(s) ({', '.join(langs)}) but none "
            f"defines `{PROGRAM_MARK}`"
        )
    for block in reversed(candidates):  # the last complete one that parses
        if _syntax_error(block.code) is None:
            return block.code, None
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
            if _is_program(code) and _syntax_error(code) is None:
                return _without_trailing_words(code)
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


def extract_program(reply: str, parent_source: str) -> PatchResult:
    """The child program a reply describes, or why there is none."""
    text = strip_think(reply.replace("\r\n", "\n").replace("\r", "\n"))
    parent = parent_source.replace("\r\n", "\n")
    if any(_SEARCH.match(line) for line in text.split("\n")):
        mode = "diff"
        blocks, error = _parse_blocks(text)
        if error is None:
            source, error = _apply_blocks(parent, blocks)
        applied = len(blocks)
    else:
        mode = "full"
        source, error = _full_program(text)
        applied = 0
        unusable = source is None or _syntax_error(source) is not None
        if unusable and has_hunks(text):
            mode = "diff"
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
            applied = len(blocks)
        elif error == "no code in the reply" or (error or "").startswith("no full program"):
            mode = "none"
    if error is not None or source is None:
        return PatchResult(None, mode, error or "no program", 0)
    source = source.strip("\n") + "\n"
    if (err := _syntax_error(source)) is not None:
        return PatchResult(None, mode, err, 0)
    if _same(source, parent):
        return PatchResult(None, mode, "no change", 0)
    return PatchResult(source, mode, None, applied)
