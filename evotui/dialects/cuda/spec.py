"""The CUDA candidate format: a Python-syntax file that is never executed. It is parsed with
``ast`` and every module-level value is read with ``ast.literal_eval``. README.md in this
folder documents the schema; this module turns a source into a ``CandidateSpec`` or raises
``SpecError`` with a reason code and the offending line.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any

from evotui.core import reasons
from evotui.dialects.cuda.expr import FUNCTIONS, Expr, ExprError, parse

SOURCE_NAME = "CUDA_SOURCE"
SETTINGS = ("CUDA_SOURCE", "LAUNCH", "OUTPUTS", "SCRATCH", "SYMBOLS", "TUNABLES", "NVRTC_OPTIONS")
CONSTANT = re.compile(r"^[A-Z][A-Z0-9_]*$")
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
DTYPES = ("float32", "float16", "bfloat16", "float64", "int32", "int64", "int16", "int8",
          "uint8", "bool")
MAX_SOURCE_CHARS = 200_000
MAX_LAUNCHES, MAX_BUFFERS, MAX_SYMBOLS, MAX_ARGS = 16, 8, 32, 64

# NVRTC options a candidate may add (the harness sets the architecture and the defines)
ALLOWED_OPTIONS = re.compile(
    r"^(--use_fast_math|-use_fast_math|--extra-device-vectorization|-lineinfo|"
    r"--generate-line-info|--restrict|-restrict|"
    r"--(ftz|prec-div|prec-sqrt|fmad)=(true|false)|"
    r"--maxrregcount=\d{1,3}|-maxrregcount=\d{1,3}|--std=c\+\+(17|20)|-std=c\+\+(17|20))$")


class SpecError(ValueError):
    def __init__(self, reason: str, message: str, line: int = 0) -> None:
        super().__init__(message)
        self.reason, self.message, self.line = reason, message, line


@dataclass(frozen=True)
class BufferSpec:
    """An output (returned by forward, in order) or a scratch buffer (zero-filled per call)."""

    name: str
    shape: tuple[Expr, ...] | None  # None: the shape of ``like``
    like: str | None  # a tensor whose shape (and, without ``dtype``, dtype) it takes
    dtype: str | None  # a dtype name, or the name of a tensor whose dtype it takes


@dataclass(frozen=True)
class LaunchSpec:
    kernel: str
    grid: tuple[Expr, ...]  # 1 to 3 dimensions
    block: tuple[Expr, ...]
    shared_mem: Expr  # dynamic shared memory, bytes
    args: tuple[Expr, ...]  # a bare tensor name for pointer parameters, else a scalar expression


@dataclass(frozen=True)
class CandidateSpec:
    cuda_source: str
    launches: tuple[LaunchSpec, ...]
    outputs: tuple[BufferSpec, ...]
    scratch: tuple[BufferSpec, ...]
    symbols: tuple[tuple[str, Expr], ...]  # evaluated in order; later ones may use earlier ones
    constants: dict[str, int]  # module-level int constants: tunables, and -D defines for NVRTC
    tunables: dict[str, tuple[int, ...]]
    options: tuple[str, ...]
    source_line: int  # line of CUDA_SOURCE in the file (compile errors are reported from it)

    def defined_names(self) -> dict[str, str]:
        """Names the candidate itself defines, with what they are."""
        names = {b.name: "output" for b in self.outputs}
        names.update({b.name: "scratch buffer" for b in self.scratch})
        names.update({n: "symbol" for n, _ in self.symbols})
        names.update({n: "constant" for n in self.constants})
        return names


def is_cuda_candidate(source: str) -> bool:
    """A candidate in this dialect assigns ``CUDA_SOURCE`` at module level."""
    return re.search(rf"^{SOURCE_NAME}\s*[:=]", source, re.MULTILINE) is not None


def parse_spec(source: str) -> CandidateSpec:
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        raise SpecError(reasons.SYNTAX_ERROR, f"line {e.lineno}: {e.msg}", e.lineno or 0) from None
    values: dict[str, Any] = {}
    lines: dict[str, int] = {}
    for i, stmt in enumerate(tree.body):
        if i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) \
                and isinstance(stmt.value.value, str):
            continue  # the docstring
        name, value = _literal_assignment(stmt)
        if name in values:
            raise SpecError(reasons.BAD_INTERFACE, f"`{name}` is assigned twice", stmt.lineno)
        values[name], lines[name] = value, stmt.lineno
    return _build(values, lines)


def _literal_assignment(stmt: ast.stmt) -> tuple[str, Any]:
    line = stmt.lineno
    if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1 \
            or not isinstance(stmt.targets[0], ast.Name):
        what = type(stmt).__name__
        raise SpecError(reasons.FORBIDDEN_CONSTRUCT,
                        f"a CUDA candidate holds only `NAME = <literal>` assignments (found a "
                        f"{what}); it is never executed, so imports, functions and classes have "
                        "no place in it", line)
    name = stmt.targets[0].id
    try:
        value = ast.literal_eval(stmt.value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise SpecError(reasons.FORBIDDEN_CONSTRUCT,
                        f"`{name}` must be a literal (strings, numbers, lists, dicts); "
                        "expressions go inside strings, e.g. \"cdiv(M, BLOCK)\"", line) from None
    if name not in SETTINGS:
        if not CONSTANT.match(name):
            raise SpecError(reasons.BAD_INTERFACE,
                            f"unknown name `{name}` (settings: {', '.join(SETTINGS)}; "
                            "constants are UPPERCASE ints)", line)
        if isinstance(value, bool) or not isinstance(value, int):
            raise SpecError(reasons.BAD_INTERFACE,
                            f"unknown name `{name}`: settings are {', '.join(SETTINGS)}; any "
                            f"other UPPERCASE name is an int constant (-D{name}=... for NVRTC)",
                            line)
    return name, value


def _fail(message: str, line: int) -> SpecError:
    return SpecError(reasons.BAD_INTERFACE, message, line)


def _expr(value: Any, where: str, line: int) -> Expr:
    try:
        return parse(value)
    except ExprError as e:
        raise _fail(f"{where}: {e}", line) from None


def _dims(value: Any, where: str, line: int) -> tuple[Expr, ...]:
    items = list(value) if isinstance(value, list | tuple) else [value]
    if not 1 <= len(items) <= 3:
        raise _fail(f"{where}: 1 to 3 dimensions", line)
    return tuple(_expr(v, where, line) for v in items)


def _identifier(value: Any, where: str, line: int) -> str:
    if not isinstance(value, str) or not IDENTIFIER.match(value) or value in FUNCTIONS:
        raise _fail(f"{where}: {value!r} is not a valid name", line)
    return value


def _keys(d: Any, allowed: set[str], where: str, line: int) -> dict[str, Any]:
    if not isinstance(d, dict):
        raise _fail(f"{where} must be a dict", line)
    unknown = sorted(set(map(str, d)) - allowed)
    if unknown:
        raise _fail(f"{where}: unknown keys {unknown} (allowed: {sorted(allowed)})", line)
    return d


def _buffers(raw: Any, setting: str, line: int) -> tuple[BufferSpec, ...]:
    if not isinstance(raw, list) or len(raw) > MAX_BUFFERS:
        raise _fail(f"{setting} must be a list of at most {MAX_BUFFERS} dicts", line)
    out = []
    for i, item in enumerate(raw):
        where = f"{setting}[{i}]"
        d = _keys(item, {"name", "shape", "like", "dtype"}, where, line)
        name = _identifier(d.get("name"), f"{where}.name", line)
        like = _identifier(d["like"], f"{where}.like", line) if "like" in d else None
        shape = None
        if "shape" in d:
            if not isinstance(d["shape"], list | tuple) or len(d["shape"]) > 8:
                raise _fail(f"{where}.shape must be a list of at most 8 expressions", line)
            shape = tuple(_expr(s, f"{where}.shape", line) for s in d["shape"])
        dtype = d.get("dtype")
        if dtype is not None and (not isinstance(dtype, str) or not (dtype in DTYPES
                                                                     or IDENTIFIER.match(dtype))):
            raise _fail(f"{where}.dtype: {dtype!r} is neither a dtype ({', '.join(DTYPES)}) "
                        "nor a tensor name", line)
        if shape is None and like is None:
            raise _fail(f"{where}: give a `shape` or `like` (a tensor to copy the shape of)", line)
        if dtype is None and like is None:
            raise _fail(f"{where}: give a `dtype` or `like`", line)
        out.append(BufferSpec(name, shape, like, dtype))
    return tuple(out)


def _launches(raw: Any, line: int) -> tuple[LaunchSpec, ...]:
    if not isinstance(raw, list) or not 1 <= len(raw) <= MAX_LAUNCHES:
        raise _fail(f"LAUNCH must be a list of 1 to {MAX_LAUNCHES} dicts", line)
    out = []
    for i, item in enumerate(raw):
        where = f"LAUNCH[{i}]"
        d = _keys(item, {"kernel", "grid", "block", "shared_mem", "args"}, where, line)
        for key in ("kernel", "grid", "block", "args"):
            if key not in d:
                raise _fail(f"{where}: missing `{key}`", line)
        args = d["args"]
        if not isinstance(args, list | tuple) or len(args) > MAX_ARGS:
            raise _fail(f"{where}.args must be a list of at most {MAX_ARGS} expressions", line)
        out.append(LaunchSpec(
            kernel=_identifier(d["kernel"], f"{where}.kernel", line),
            grid=_dims(d["grid"], f"{where}.grid", line),
            block=_dims(d["block"], f"{where}.block", line),
            shared_mem=_expr(d.get("shared_mem", 0), f"{where}.shared_mem", line),
            args=tuple(_expr(a, f"{where}.args", line) for a in args)))
    return tuple(out)


def _build(values: dict[str, Any], lines: dict[str, int]) -> CandidateSpec:
    for required in ("CUDA_SOURCE", "LAUNCH", "OUTPUTS"):
        if required not in values:
            raise _fail(f"missing `{required}`", 0)
    source = values["CUDA_SOURCE"]
    if not isinstance(source, str) or not source.strip():
        raise _fail("CUDA_SOURCE must be a non-empty string", lines["CUDA_SOURCE"])
    if len(source) > MAX_SOURCE_CHARS:
        raise _fail(f"CUDA_SOURCE is longer than {MAX_SOURCE_CHARS} characters", lines["CUDA_SOURCE"])
    constants = {k: v for k, v in values.items() if k not in SETTINGS}

    symbols_raw = values.get("SYMBOLS", {})
    sline = lines.get("SYMBOLS", 0)
    if not isinstance(symbols_raw, dict) or len(symbols_raw) > MAX_SYMBOLS:
        raise _fail(f"SYMBOLS must be a dict of at most {MAX_SYMBOLS} name: expression", sline)
    symbols = tuple((_identifier(k, "SYMBOLS", sline), _expr(v, f"SYMBOLS[{k!r}]", sline))
                    for k, v in symbols_raw.items())

    tunables_raw = values.get("TUNABLES", {})
    tline = lines.get("TUNABLES", 0)
    if not isinstance(tunables_raw, dict):
        raise _fail("TUNABLES must be a dict of NAME: [int choices]", tline)
    tunables: dict[str, tuple[int, ...]] = {}
    for k, v in tunables_raw.items():
        if k not in constants:
            raise _fail(f"TUNABLES names `{k}`, which is not a module-level int constant", tline)
        if not isinstance(v, list | tuple) or not v or not all(
                isinstance(c, int) and not isinstance(c, bool) and c > 0 for c in v):
            raise _fail(f"TUNABLES[{k!r}] must be a non-empty list of positive ints", tline)
        tunables[k] = tuple(v)

    options = values.get("NVRTC_OPTIONS", [])
    oline = lines.get("NVRTC_OPTIONS", 0)
    if not isinstance(options, list | tuple) or not all(isinstance(o, str) for o in options):
        raise _fail("NVRTC_OPTIONS must be a list of strings", oline)
    for o in options:
        if not ALLOWED_OPTIONS.match(o):
            raise SpecError(reasons.FORBIDDEN_CONSTRUCT,
                            f"NVRTC option {o!r} is not allowed (allowed: --use_fast_math, "
                            "--ftz/--prec-div/--prec-sqrt/--fmad=true|false, --maxrregcount=N, "
                            "--extra-device-vectorization, -lineinfo, --restrict, --std=c++17|20)",
                            oline)

    spec = CandidateSpec(
        cuda_source=source,
        launches=_launches(values["LAUNCH"], lines["LAUNCH"]),
        outputs=_buffers(values["OUTPUTS"], "OUTPUTS", lines["OUTPUTS"]),
        scratch=_buffers(values.get("SCRATCH", []), "SCRATCH", lines.get("SCRATCH", 0)),
        symbols=symbols, constants=constants, tunables=tunables, options=tuple(options),
        source_line=lines["CUDA_SOURCE"])
    if not spec.outputs:
        raise _fail("OUTPUTS is empty: forward must return at least one tensor", lines["OUTPUTS"])
    seen: dict[str, str] = {}
    for kind, names in (("output", [b.name for b in spec.outputs]),
                        ("scratch buffer", [b.name for b in spec.scratch]),
                        ("symbol", [n for n, _ in spec.symbols]),
                        ("constant", list(constants))):
        for n in names:
            if n in seen:
                raise _fail(f"`{n}` is both a {seen[n]} and a {kind}", 0)
            seen[n] = kind
    return spec
