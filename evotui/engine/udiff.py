"""Unified diffs in model answers (``--- a/x`` / ``+++ b/x`` / ``@@ … @@`` hunks).

Small models asked for a change often answer with a unified diff instead of SEARCH/REPLACE
blocks, usually with wrong line numbers and sometimes inside a ```diff fence. Line numbers
are ignored: each hunk becomes a (search, replace) pair of line lists — context and removed
lines, context and added lines — that the caller locates in the parent by content.
"""

from __future__ import annotations

import re

_HUNK = re.compile(r"^@@\s*(?:-(\d+))?[\d,]*\s*\+?[\d,]*\s*@@")
_FILE_HEADER = re.compile(r"^(---|\+\+\+)\s")
_FENCE_END = re.compile(r"^\s*(`{3,}|~{3,})\s*$")


def has_hunks(text: str) -> bool:
    return any(_HUNK.match(line) for line in text.split("\n"))


def parse_unified_diff(text: str) -> list[tuple[list[str], list[str], int | None]]:
    """Every hunk of ``text`` as (lines to find, lines to put instead, the 0-based line its
    header names or None); [] when there is none. The line only breaks ties between several
    places that match.

    A hunk runs from its ``@@`` header to the next header, a file header, the end of a code
    fence or the first line that is not context (`` ``), removal (``-``), addition (``+``),
    an empty line (context that lost its space) or ``\\ No newline at end of file``.
    """
    hunks: list[tuple[list[str], list[str], int | None]] = []
    search: list[str] | None = None
    replace: list[str] = []
    line: int | None = None

    def close() -> None:
        nonlocal search
        if search is not None and (search != replace):
            while search and replace and search[-1] == "" and replace[-1] == "":
                search.pop()  # empty lines picked up after the hunk's end
                replace.pop()
            hunks.append((search, replace, line))
        search = None

    for text_line in text.split("\n"):
        header = _HUNK.match(text_line)
        if header:
            close()
            search, replace = [], []
            line = int(header.group(1)) - 1 if header.group(1) else None
            continue
        if search is None:
            continue
        if _FILE_HEADER.match(text_line) or _FENCE_END.match(text_line):
            close()
        elif text_line.startswith("\\"):
            continue
        elif text_line == "" or text_line.startswith(" "):
            search.append(text_line[1:])
            replace.append(text_line[1:])
        elif text_line.startswith("-"):
            search.append(text_line[1:])
        elif text_line.startswith("+"):
            replace.append(text_line[1:])
        else:
            close()
    close()
    return hunks
