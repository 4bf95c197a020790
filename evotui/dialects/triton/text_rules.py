"""One text for every reader of a candidate. Part of static_rules.check_source.

The static rules parse the candidate's text; Python compiles the same text (a ``str``, so a
coding cookie is ignored); Triton reads each kernel's source again through ``inspect`` and
``linecache``, which would decode the file by its PEP 263 cookie (``utf-7``,
``unicode_escape``: a comment in one reading is code in the other) and whose line numbers are
Python's, not ``str.splitlines``'s. The harness pins the text it checked for Triton to read
(``pin``); these rules refuse, before anything runs, the files whose text depends on who
reads it:

- a coding cookie that names anything but UTF-8 (with or without a byte-order mark);
- text that is not UTF-8 (a string holding surrogates: bytes decoded with
  ``surrogateescape``);
- a character that ``str.splitlines`` counts as a line break and Python's tokenizer does not
  (form feed, vertical tab, ``\\x1c``-``\\x1e``, U+0085, U+2028, U+2029), anywhere: in code,
  strings or comments. Whichever tool numbers lines, it then numbers them as Python does.
"""

from __future__ import annotations

import codecs
import io
import linecache
import re
import tokenize
import unicodedata

from evotui.core import reasons
from evotui.dialects.base import StaticIssue

BOM = "\ufeff"
# what tokenize (and so linecache and inspect) takes for a cookie, on the first two lines
_COOKIE = re.compile(r"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.ASCII)
# ... and anything in a comment there that a looser reader could take for one
_LOOSE_COOKIE = re.compile(r"#.*?coding[:=]\s*([-\w.]+)", re.ASCII | re.IGNORECASE)
# the line ends Python's tokenizer knows
_PYTHON_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def without_bom(source: str) -> str:
    """The text, without the UTF-8 byte-order mark that may open it (a marker of the encoding,
    not text: Python skips it in a file, and refuses it as a character)."""
    return source[1:] if source.startswith(BOM) else source


def python_lines(source: str) -> list[str]:
    """``source`` cut into lines where Python's tokenizer ends them (ends kept): what the
    harness pins for ``inspect`` to read, numbered as the compiled code is."""
    return _PYTHON_LINE.findall(source)


def decode(data: bytes) -> str:
    """A candidate file's bytes as the text the harness checks, compiles and pins: UTF-8
    (UnicodeDecodeError otherwise), no newline translation, no byte-order mark."""
    return without_bom(data.decode("utf-8"))


def pin(filename: str, source: str) -> None:
    """Make ``source`` what ``linecache`` (so ``inspect``, so Triton) reads for ``filename``:
    an entry with no modification time, which ``checkcache`` never replaces from the file."""
    linecache.cache[filename] = (len(source), None, python_lines(source), filename)


def _line_of(source: str, index: int) -> int:
    return source.count("\n", 0, index) + source.count("\r", 0, index) \
        - source.count("\r\n", 0, index) + 1


def _describe(ch: str) -> str:
    name = unicodedata.name(ch, "") or {"\x0b": "VERTICAL TAB", "\x0c": "FORM FEED",
                                        "\x1c": "FILE SEPARATOR", "\x1d": "GROUP SEPARATOR",
                                        "\x1e": "RECORD SEPARATOR", "\x85": "NEXT LINE"}.get(ch, "")
    return f"U+{ord(ch):04X}" + (f" ({name.lower()})" if name else "")


def check_text(source: str) -> StaticIssue | None:
    """The first way ``source`` reads differently to different readers, or None."""
    try:
        data = source.encode("utf-8")
    except UnicodeEncodeError as e:
        code = ord(source[e.start])
        what = (f"the byte 0x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF
                else f"a lone surrogate U+{code:04X}")
        return StaticIssue(reasons.AMBIGUOUS_SOURCE, f"the file is not UTF-8 text ({what}): "
                           "candidates are UTF-8", _line_of(source, e.start))
    text = without_bom(source)
    for number, line in enumerate(python_lines(text)[:2], 1):
        found = _COOKIE.match(line) or _LOOSE_COOKIE.search(line)
        if found and not _is_utf8(found.group(1)):
            return StaticIssue(reasons.AMBIGUOUS_SOURCE,
                               f"a coding cookie for `{found.group(1)}`: candidates are UTF-8 "
                               "(Triton would read the file in that encoding, not the text "
                               "that was checked)", number)
    try:  # the reader linecache uses, on the bytes as written (a BOM with another cookie)
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as e:
        return StaticIssue(reasons.AMBIGUOUS_SOURCE, f"the coding declaration: {e.msg}",
                           e.lineno or 1)
    if not _is_utf8(encoding.removesuffix("-sig")):
        return StaticIssue(reasons.AMBIGUOUS_SOURCE, f"the file declares `{encoding}`: "
                           "candidates are UTF-8", 1)
    for number, line in enumerate(python_lines(text), 1):
        body = line.rstrip("\r\n")
        parts = body.splitlines()
        if body and parts != [body]:
            ch = body[len(parts[0]) if parts else 0]
            return StaticIssue(reasons.AMBIGUOUS_SOURCE,
                               f"{_describe(ch)}, which str.splitlines counts as a line break "
                               "and Python does not: write it as an escape (the rules and "
                               "Triton would number the lines differently)", number)
    return None


def _is_utf8(name: str) -> bool:
    try:
        return codecs.lookup(name).name == "utf-8"
    except LookupError:
        return False
