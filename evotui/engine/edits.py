"""Applying a model's edits to the parent: SEARCH/REPLACE blocks and unified diff hunks
(``udiff`` reads those), each located by content, tolerant of indentation drift, trailing
whitespace and look-alike characters. A block that matches several places, with nothing to
choose among them, is ambiguous and fails (``extract_program`` never guesses).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from evotui.engine.udiff import parse_unified_diff

# markers with 3 or more signs (models miscount them), an optional colon; older aider wrote
# ORIGINAL/UPDATED
SEARCH_LINE = re.compile(r"^\s*<{3,}\s*(SEARCH|ORIGINAL):?\s*$", re.IGNORECASE)
_DIVIDER = re.compile(r"^\s*={3,}\s*$")
_REPLACE = re.compile(r"^\s*>{3,}\s*(REPLACE|UPDATED):?\s*$", re.IGNORECASE)

# characters that look like spaces or quotes but are not Python: chat templates and models
# put non-breaking spaces in indentation and typographic quotes around strings
LOOKALIKES = str.maketrans({"\u00a0": " ", "\u202f": " ", "\u2007": " ", "\u2009": " ",
                            "\u200b": None, "\ufeff": None, "\u201c": '"', "\u201d": '"',
                            "\u2018": "'", "\u2019": "'"})
FENCE = re.compile(r"^\s*(`{3,}|~{3,})\s*([\w+.#-]*)[^`]*$")


@dataclass
class Block:
    search: list[str]
    replace: list[str]
    near: int | None = None  # a unified diff's header line: picks among several matches


def _strip_fence_wrap(search: list[str], replace: list[str]) -> tuple[list[str], list[str]]:
    """Drop code fences wrapped around one side of a block (```python … ```), or one fence
    opened at the top of SEARCH and closed at the bottom of REPLACE."""

    def closes(line: str) -> bool:
        return line.strip().startswith(("```", "~~~"))

    def unwrap(lines: list[str]) -> list[str]:
        if len(lines) >= 2 and FENCE.match(lines[0]) and closes(lines[-1]):
            return lines[1:-1]
        return lines

    search, replace = unwrap(search), unwrap(replace)
    if search and replace and FENCE.match(search[0]) and closes(replace[-1]):
        return search[1:], replace[:-1]
    return search, replace


def parse_blocks(text: str) -> tuple[list[Block], str | None]:
    blocks: list[Block] = []
    state, search, replace = "out", [], []
    for line in text.split("\n"):
        if state == "out":
            if SEARCH_LINE.match(line):
                state, search, replace = "search", [], []
        elif state == "search":
            if _DIVIDER.match(line):
                state = "replace"
            elif SEARCH_LINE.match(line) or _REPLACE.match(line):
                return (
                    blocks,
                    f"SEARCH/REPLACE block {len(blocks) + 1} is malformed: no ======= line",
                )
            else:
                search.append(line)
        elif _REPLACE.match(line):
            blocks.append(Block(*_strip_fence_wrap(search, replace)))
            state = "out"
        elif SEARCH_LINE.match(line):
            return (
                blocks,
                f"SEARCH/REPLACE block {len(blocks) + 1} is malformed: no >>>>>>> REPLACE line",
            )
        else:
            replace.append(line)
    if state != "out":
        return blocks, f"truncated: SEARCH/REPLACE block {len(blocks) + 1} is not closed"
    return blocks, None


def indent_width(line: str) -> int:
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
    return line.translate(LOOKALIKES).rstrip()


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
        shifts = {indent_width(w) - indent_width(b) for w, b in zip(window, body, strict=True)}
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

    return [lead(indent_width(s) + shift) + s.lstrip() if s.strip() else "" for s in lines]


def _locations(src: list[str], block: Block) -> list[tuple[int, int, list[str]]]:
    """Every place the block's SEARCH matches in ``src``: (start, end, lines to put there),
    at the strictest matching that finds any."""
    search, replace = block.search, block.replace
    for s, r in ((search, replace), (_trim_blank(search), _trim_blank(replace))):
        if starts := _find_exact(src, s):
            return [(i, i + len(s), r) for i in starts]
    return [(start, end, _reindent(_trim_blank(replace), shift, src[start].startswith("\t")))
            for start, end, shift in _find_shifted(src, search)]


def apply_blocks(parent: str, blocks: list[Block]) -> tuple[str | None, str | None]:
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


def apply_unified_diff(text: str, parent: str) -> tuple[str | None, str | None, int]:
    """The parent with the reply's unified diff hunks applied: (source, error, hunks)."""
    blocks, shift = [], 0
    for search, replace, near in parse_unified_diff(text):
        # the header numbers the parent's lines; earlier hunks have moved them
        blocks.append(Block(search, replace, None if near is None else near + shift))
        shift += len(replace) - len(search)
    source, error = apply_blocks(parent, blocks) if blocks else (None, "empty diff")
    if error is not None:
        error = error.replace("SEARCH/REPLACE block", "diff hunk").replace(
            "its SEARCH starts", "its context starts").replace(
            "an empty SEARCH section", "no context or removed lines")
    return source, error, len(blocks)


__all__ = ["FENCE", "Block", "LOOKALIKES", "SEARCH_LINE", "apply_blocks", "apply_unified_diff",
           "indent_width", "parse_blocks"]
