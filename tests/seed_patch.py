"""Candidates built from a seed plus a small change, so that each fixture reads as its change:
``patched`` applies (old, new) replacements to a seed's text, each of which must match it
exactly once (a seed that moved on fails loudly, never silently builds another program)."""

from __future__ import annotations

from collections.abc import Iterable


def patched(text: str, changes: Iterable[tuple[str, str]]) -> str:
    """``text`` with every ``old`` replaced by its ``new``, in order."""
    for old, new in changes:
        found = text.count(old)
        if found != 1:
            raise AssertionError(f"the seed holds {found} copies of {old!r}, not exactly one: "
                                 "the fixture's change no longer applies")
        text = text.replace(old, new)
    return text


def code_of(text: str) -> str:
    """A module's text without its docstring and the blank lines after it."""
    if not text.startswith('"""'):
        raise AssertionError("the seed does not start with its docstring")
    end = text.index('"""', 3) + 3
    return text[end:].lstrip("\n")


def with_doc(doc: str, code: str) -> str:
    """``code`` right under the docstring ``doc``."""
    return f'"""{doc}"""\n{code}'
