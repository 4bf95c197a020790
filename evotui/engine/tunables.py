"""Tunable integer literals of a candidate: find them and rewrite them in place.

A tunable is an integer literal that can change without touching the rest of the program:

- declared: ``TUNABLES = {"NAME": [choices, ...]}`` names a module-level ``NAME = <int>``
  (declared choices may include 0, for on/off knobs such as ``"ONE_PASS": [0, 1]``);
- discovered: a module-level UPPERCASE int constant whose name contains BLOCK, WARPS, STAGES,
  GROUP, SPLIT, TILE or CHUNK, with choices around its current value (this applies to names
  that TUNABLES leaves out too; declare a single choice, ``"NAME": [64]``, to freeze one);
- launch keywords: ``num_warps=<int>`` / ``num_stages=<int>`` (and UPPERCASE constexpr keywords
  matching the names above) in a kernel launch ``kernel[grid](...)``, named
  ``launch:<kernel>:<keyword>``; the n-th launch (n >= 2) of the same kernel in source order is
  ``launch:<kernel>#n:<keyword>``. ``TUNABLES`` may declare choices for these names too.

Rewrites edit only the characters of the literal (by AST positions), so formatting, comments
and everything else stay byte-identical.
"""

from __future__ import annotations

import ast
import hashlib
import io
import re
import tokenize
from bisect import bisect_left
from dataclasses import dataclass

DECLARATION = "TUNABLES"
KEYWORDS = ("BLOCK", "WARPS", "STAGES", "GROUP", "SPLIT", "TILE", "CHUNK")
LAUNCH_KEYWORDS = ("num_warps", "num_stages")
WINDOW = 8  # discovered power-of-two choices span value/WINDOW .. value*WINDOW

_NEWLINE = re.compile(rb"\r\n|\r|\n")


@dataclass(frozen=True)
class Tunable:
    name: str
    value: int
    choices: tuple[int, ...]  # sorted ascending, no duplicates


@dataclass(frozen=True)
class _Site:
    tunable: Tunable
    start: int  # byte offsets of the literal in the UTF-8 source
    end: int


def _is_int_literal(node: ast.AST | None, minimum: int = 1) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is int and node.value >= minimum


def _matches_keyword(name: str) -> bool:
    upper = name.upper()
    return any(k in upper for k in KEYWORDS)


def _powers_of_two(value: int, lo: int, hi: int) -> list[int]:
    low, high = max(lo, value / WINDOW), min(hi, value * WINDOW)
    out, p = [], 1
    while p <= high:
        if p >= low:
            out.append(p)
        p *= 2
    return out


def default_choices(name: str, value: int) -> tuple[int, ...]:
    """Choices for an undeclared tunable, from its name; always includes ``value``."""
    upper = name.upper()
    if "WARPS" in upper:
        found = _powers_of_two(value, 1, 32)
    elif "STAGES" in upper:
        found = list(range(1, 7))
    elif any(k in upper for k in ("BLOCK", "TILE", "CHUNK")):
        found = _powers_of_two(value, 16, 65536)
    elif any(k in upper for k in ("GROUP", "SPLIT")):
        found = _powers_of_two(value, 1, 64)
    else:
        found = []
    return tuple(sorted(set(found) | {value}))


def _bindings(stmt: ast.stmt) -> list[tuple[str, ast.expr | None]]:
    """Names a module-level statement binds, with the value bound (None when not a literal)."""
    if isinstance(stmt, ast.Assign):
        if len(stmt.targets) == 1:
            target = stmt.targets[0]
            if isinstance(target, ast.Name):
                return [(target.id, stmt.value)]
            if (
                isinstance(target, ast.Tuple | ast.List)
                and isinstance(stmt.value, ast.Tuple | ast.List)
                and len(target.elts) == len(stmt.value.elts)
                and all(isinstance(e, ast.Name) for e in target.elts)
            ):
                return [(e.id, v) for e, v in zip(target.elts, stmt.value.elts, strict=True)]
        return [(n.id, None) for t in stmt.targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
        return [(stmt.target.id, stmt.value)] if stmt.value is not None else []
    if isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name):
        return [(stmt.target.id, None)]
    return []


def _declared(node: ast.expr | None) -> dict[str, tuple[int, ...]]:
    if not isinstance(node, ast.Dict):
        return {}
    out: dict[str, tuple[int, ...]] = {}
    for key, value in zip(node.keys, node.values, strict=True):
        if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
            continue
        if not isinstance(value, ast.List | ast.Tuple):
            continue
        ints = {e.value for e in value.elts if _is_int_literal(e, minimum=0)}
        if ints:
            out[key.value] = tuple(sorted(ints))
    return out


def _kernel_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


class TunableSource:
    """A parsed candidate source: its tunables and where their literals live.

    Raises SyntaxError when the source does not parse.
    """

    def __init__(self, source: str) -> None:
        self.source = source
        self._bytes = source.encode("utf-8")
        self._line_starts = [0] + [m.end() for m in _NEWLINE.finditer(self._bytes)]
        tree = ast.parse(source)
        sites: list[_Site] = []

        consts: dict[str, ast.Constant] = {}
        declared: dict[str, tuple[int, ...]] = {}
        for stmt in tree.body:
            for name, value in _bindings(stmt):
                if name == DECLARATION:
                    declared = _declared(value)
                elif _is_int_literal(value, minimum=0):
                    assert isinstance(value, ast.Constant)
                    consts[name] = value
                else:
                    consts.pop(name, None)  # rebound to something that is not a literal
        for name, node in consts.items():
            if name in declared:
                choices = declared[name]
            elif node.value == 0:
                continue  # 0 is a tunable value only where TUNABLES declares it
            elif name.isupper() and _matches_keyword(name):
                choices = default_choices(name, node.value)
            else:
                continue
            sites.append(self._site(name, node, choices))

        launches = [
            n
            for n in ast.walk(tree)
            if isinstance(n, ast.Call)
            and isinstance(n.func, ast.Subscript)
            and _kernel_name(n.func.value) is not None
        ]
        launches.sort(key=lambda n: (n.lineno, n.col_offset))
        seen: dict[str, int] = {}
        for call in launches:
            assert isinstance(call.func, ast.Subscript)
            kernel = _kernel_name(call.func.value)
            assert kernel is not None
            seen[kernel] = seen.get(kernel, 0) + 1
            label = kernel if seen[kernel] == 1 else f"{kernel}#{seen[kernel]}"
            for kw in call.keywords:
                if kw.arg is None or not _is_int_literal(kw.value):
                    continue
                if not (
                    kw.arg in LAUNCH_KEYWORDS or (kw.arg.isupper() and _matches_keyword(kw.arg))
                ):
                    continue
                assert isinstance(kw.value, ast.Constant)
                name = f"launch:{label}:{kw.arg}"
                choices = declared.get(name) or default_choices(kw.arg, kw.value.value)
                sites.append(self._site(name, kw.value, choices))

        sites.sort(key=lambda s: s.start)
        self._sites = {s.tunable.name: s for s in sites}
        self.tunables = [s.tunable for s in sites]

    def _offset(self, line: int, col: int) -> int:
        return self._line_starts[line - 1] + col

    def _site(self, name: str, node: ast.Constant, choices: tuple[int, ...]) -> _Site:
        assert node.end_lineno is not None and node.end_col_offset is not None
        start = self._offset(node.lineno, node.col_offset)
        end = self._offset(node.end_lineno, node.end_col_offset)
        text = self._bytes[start:end].decode("utf-8")
        if ast.literal_eval(text) != node.value:  # positions disagree with the text: a bug
            raise AssertionError(f"tunable {name}: literal {text!r} at {start} is not {node.value}")
        return _Site(Tunable(name, node.value, choices), start, end)

    def with_values(self, values: dict[str, int]) -> str:
        """The source with the named tunables' literals replaced; nothing else changes."""
        unknown = sorted(set(values) - set(self._sites))
        if unknown:
            raise KeyError(f"unknown tunables {unknown}; known: {sorted(self._sites)}")
        out = self._bytes
        for name in sorted(values, key=lambda n: self._sites[n].start, reverse=True):
            value = values[name]
            if type(value) is not int:
                raise TypeError(f"tunable {name}: value {value!r} is not an int")
            site = self._sites[name]
            out = out[: site.start] + str(value).encode() + out[site.end :]
        return out.decode("utf-8")


def find_tunables(source: str) -> list[Tunable]:
    """Tunables of ``source`` in source order. Raises SyntaxError when it does not parse."""
    return TunableSource(source).tunables


def set_tunables(source: str, values: dict[str, int]) -> str:
    """Rewrite only the literals of the named tunables (KeyError for an unknown name)."""
    return TunableSource(source).with_values(values)


def neighbours(t: Tunable) -> list[int]:
    """The choices one step below and above the current value (it may lie between choices)."""
    choices = t.choices
    if t.value in choices:
        i = choices.index(t.value)
        return [choices[j] for j in (i - 1, i + 1) if 0 <= j < len(choices)]
    i = bisect_left(choices, t.value)
    return [choices[j] for j in (i - 1, i) if 0 <= j < len(choices)]


def config_key(source: str) -> str:
    """A stable 16-hex-digit hash of the program modulo comments, blank lines and formatting.

    Two param children of one parent share a key exactly when they share the tunable
    configuration; integer literals are normalised (``1_024`` == ``0x400`` == ``1024``).
    """
    parts: list[str] = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type in (tokenize.COMMENT, tokenize.NL, tokenize.ENDMARKER):
                continue
            if tok.type == tokenize.NEWLINE:
                parts.append("<nl>")
            elif tok.type == tokenize.INDENT:
                parts.append("<in>")
            elif tok.type == tokenize.DEDENT:
                parts.append("<de>")
            elif tok.type == tokenize.NUMBER:
                try:
                    parts.append(str(int(tok.string, 0)))
                except ValueError:
                    parts.append(tok.string)
            else:
                parts.append(tok.string)
        text = "\x00".join(parts)
    except (tokenize.TokenError, SyntaxError, ValueError):
        text = source
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def tunable_diff(parent: str, child: str) -> dict[str, tuple[int, int]] | None:
    """The tunables that changed when ``child`` is ``parent`` with only tunable literals
    changed (name → (old, new), in source order); None when anything else changed, when
    nothing changed, or when either does not parse."""
    try:
        p, c = TunableSource(parent), TunableSource(child)
    except SyntaxError:
        return None
    old = {t.name: t.value for t in p.tunables}
    new = {t.name: t.value for t in c.tunables}
    if list(old) != list(new):
        return None
    changed = {n: (old[n], new[n]) for n in old if old[n] != new[n]}
    if not changed or config_key(p.with_values({n: v for n, (_, v) in changed.items()})) \
            != config_key(child):
        return None
    return changed
