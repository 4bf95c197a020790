"""Turn a messy small-model answer into a full candidate program.

An answer may carry SEARCH/REPLACE blocks (applied to the parent), a whole program (fenced
or not), or a unified diff (hunks located by content, see ``udiff``); around them there may
be ``<think>`` sections, prose, extra fences and indentation drift. ``extract_program`` finds
the program (``programs``), applies what it must (``edits``), and checks that the result
compiles and differs from the parent. It never raises on bad input: failures come back as
``PatchResult(source=None, error=...)`` with a message fit for the user. An answer that reads
two ways (a SEARCH that matches twice, a full program and edits that disagree) is rejected as
ambiguous, never guessed.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from evotui.engine.edits import SEARCH_LINE, apply_blocks, apply_unified_diff, parse_blocks
from evotui.engine.programs import (
    elided,
    full_program,
    parsable,
    program_blocks,
    same_program,
    syntax_error,
)
from evotui.engine.udiff import has_hunks

_THINK_BLOCK = re.compile(r"<(think|thinking)>.*?</\1>", re.IGNORECASE | re.DOTALL)
_THINK_OPEN = re.compile(r"<(?:think|thinking)>", re.IGNORECASE)
_THINK_CLOSE = re.compile(r"</(?:think|thinking)>", re.IGNORECASE)


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


def _disagreement(text: str, edited: str, parent: str, edits: str) -> str | None:
    """Why the reply is ambiguous when it also holds a whole program (not a copy of the
    parent) that differs from the parent with its edits applied; None when it does not."""
    for block in program_blocks(text):
        code = parsable(block.code)
        if code is not None and not same_program(code, parent) and not same_program(code, edited):
            return (f"ambiguous: the reply has both a full program and {edits} that give a "
                    "different program")
    return None


def extract_program(reply: str, parent_source: str) -> PatchResult:
    """The child program a reply describes, or why there is none."""
    text = strip_think(reply.replace("\r\n", "\n").replace("\r", "\n"))
    parent = parent_source.replace("\r\n", "\n")
    if any(SEARCH_LINE.match(line) for line in text.split("\n")):
        mode = "diff"
        blocks, error = parse_blocks(text)
        if error is None and has_hunks(text):
            error = "ambiguous: the reply mixes SEARCH/REPLACE blocks and a unified diff"
        if error is None:
            source, error = apply_blocks(parent, blocks)
        if error is None and source is not None:
            error = _disagreement(text, source, parent, "SEARCH/REPLACE blocks")
        applied = len(blocks)
    else:
        mode = "full"
        source, error = full_program(text, parent)
        applied = 0
        unusable = source is None or syntax_error(source) is not None
        if has_hunks(text) and unusable:
            mode = "diff"
            source, error, applied = apply_unified_diff(text, parent)
        elif has_hunks(text):
            edited, diff_error, hunks = apply_unified_diff(text, parent)
            if diff_error is None and edited is not None and not same_program(edited, source):
                mode = "diff"
                if same_program(source, parent):  # the parent quoted, then the change as a diff
                    source, applied = edited, hunks
                else:
                    error = ("ambiguous: the reply has both a full program and a unified diff "
                             "that give a different program")
        elif source is not None and (missing := elided(source, parent)):
            mode, error = "none", (f"no full program: the code uses {missing} but does not "
                                   "define it (left out as unchanged?)")
        if error == "no code in the reply" or (error or "").startswith("no full program"):
            mode = "none"
    if error is not None or source is None:
        return PatchResult(None, mode, error or "no program", 0)
    source = (parsable(source) or source).strip("\n") + "\n"
    if (err := syntax_error(source)) is not None:
        return PatchResult(None, mode, err, 0)
    if same_program(source, parent):
        return PatchResult(None, mode, "no change", 0)
    return PatchResult(source, mode, None, applied)


__all__ = ["PatchResult", "diff_text", "extract_program", "strip_think"]
