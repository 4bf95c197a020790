"""Unified diffs in model answers (``--- a/x`` / ``+++ b/x`` / ``@@ … @@`` hunks).

Small models asked for a change often answer with a unified diff instead of SEARCH/REPLACE
blocks, usually with wrong line numbers and sometimes inside a ```diff fence. Line numbers
are ignored: each hunk becomes a (search, replace) pair of line lists — context and removed
lines, context and added lines — that the caller locates in the parent by content.
"""

from __future__ import annotations

import re

_HUNK = re.compile(r"^@@\s*-?[\d,]*\s*\+?[\d,]*\s*@@")
_FILE_HEADER = re.compile(r"^(---|\+\+\+)\s")
_FENCE_END = re.compile(r"^\s*(`{3,}|~{3,})\s*$")


def has_hunks(text: str) -> bool:
    return any(_HUNK.match(line) for line in text.split("\n"))


def parse_unified_diff(text: str) -> list[tuple[list[str], list[str]]]:
    """Every hunk of ``text`` as (lines to find, lines to put instead); [] when there is none.

    A hunk runs from its ``@@`` header to the next header, a file header, the end of a code
    fence or the first line that is not context (`` ``), removal (``-``), addition (``+``),
    an empty line (context that lost its space) or ``\\ No newline at end of file``.
    """
    hunks: list[tuple[list[str], list[str]]] = []
    search: list[str] | None = None
    replace: list[str] = []

    def close() -> None:
        nonlocal search
        if search is not None and (search != replace):
            while search and replace and search[-1] == "" and replace[-1] == "":
                search.pop()  # empty lines picked up after the hunk's end
                replace.pop()
            hunks.append((search, replace))
        search = None

    for line in text.split("\n"):
        if _HUNK.match(line):
            close()
            search, replace = [], []
            continue
        if search is None:
            continue
        if _FILE_HEADER.match(line) or _FENCE_END.match(line):
            close()
        elif line.startswith("\\"):
            continue
        elif line == "" or line.startswith(" "):
            search.append(line[1:])
            replace.append(line[1:])
        elif line.startswith("-"):
            search.append(line[1:])
        elif line.startswith("+"):
            replace.append(line[1:])
        else:
            close()
    close()
    return hunks
