"""Unified diffs in model answers (``--- a/x`` / ``+++ b/x`` / ``@@ … @@`` hunks).

Small models asked for a change often answer with a unified diff instead of SEARCH/REPLACE
blocks, usually with wrong line numbers and sometimes inside a ```diff fence. Line numbers
are ignored: each hunk becomes a (search, replace) pair of line lists — context and removed
lines, context and added lines — that the caller locates in the parent by content.
"""

from __future__ import annotations

import re

# any line opening with @@ heads a hunk: "@@ -12,7 +12,8 @@", aider's "@@ ... @@", a bare "@@"
_HUNK = re.compile(r"^@@(?:\s*-(\d+))?")
_FILE_HEADER = re.compile(r"^(---|\+\+\+)(\s|$)")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


def _file_header_pair(lines: list[str], i: int) -> bool:
    """``--- a/x`` directly followed by ``+++ b/x``: a diff, even with no @@ line after."""
    return (lines[i].startswith("--- ") and i + 1 < len(lines)
            and lines[i + 1].startswith("+++ "))


def has_hunks(text: str) -> bool:
    lines = text.split("\n")
    return any(_HUNK.match(line) or _file_header_pair(lines, i) for i, line in enumerate(lines))


def parse_unified_diff(text: str) -> list[tuple[list[str], list[str], int | None]]:
    """Every hunk of ``text`` as (lines to find, lines to put instead, the 0-based line its
    header names or None); [] when there is none. The line only breaks ties between several
    places that match.

    A hunk runs from its ``@@`` header (or a ``+++`` file header with no ``@@`` line after
    it) to the next header, a file header, a code fence or the first line that is not
    context (`` ``), removal (``-``), addition (``+``), an empty line (context that lost its
    space) or ``\\ No newline at end of file``. Inside a fence such a line is context that
    lost its space when more hunk lines follow it (outside a fence it may be prose, and a
    bullet list after it is no diff).
    """
    hunks: list[tuple[list[str], list[str], int | None]] = []
    search: list[str] | None = None
    replace: list[str] = []
    pending: list[str] = []  # unprefixed lines inside a fence: context if the hunk goes on
    line: int | None = None
    in_fence = False

    def close() -> None:
        nonlocal search
        pending.clear()
        if search is not None and (search != replace):
            while search and replace and search[-1] == "" and replace[-1] == "":
                search.pop()  # empty lines picked up after the hunk's end
                replace.pop()
            hunks.append((search, replace, line))
        search = None

    lines = text.split("\n")
    for i, text_line in enumerate(lines):
        header = _HUNK.match(text_line)
        if header:
            close()
            search, replace = [], []
            line = int(header.group(1)) - 1 if header.group(1) else None
            continue
        if _FENCE.match(text_line):
            close()
            in_fence = not in_fence
            continue
        if text_line.startswith("+++ ") and i > 0 and _file_header_pair(lines, i - 1):
            close()
            search, replace, line = [], [], None  # the hunk's own @@ line may follow
            continue
        if search is None:
            continue
        if _FILE_HEADER.match(text_line):
            close()
        elif text_line.startswith("\\"):
            continue
        elif text_line == "" and pending:
            pending.append("")
        elif text_line == "" or text_line.startswith((" ", "-", "+")):
            for context in pending:
                search.append(context)
                replace.append(context)
            pending.clear()
            if text_line == "" or text_line.startswith(" "):
                search.append(text_line[1:])
                replace.append(text_line[1:])
            elif text_line.startswith("-"):
                search.append(text_line[1:])
            else:
                replace.append(text_line[1:])
        elif in_fence:
            pending.append(text_line)
        else:
            close()
    close()
    return hunks
