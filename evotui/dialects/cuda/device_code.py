"""Reading a candidate's CUDA C source without compiling it: comments stripped, ``#include``
lines, and the parameter lists of its ``extern "C" __global__`` kernels (so that the harness
knows which launch arguments are pointers and how to pack the scalars).

Pure Python (no torch, no CUDA): used by the static rules in the parent and by the launcher
in the worker.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_COMMENT_OR_STRING = re.compile(
    r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.DOTALL)
# any operand: a macro (`#include H`) is reported by its name, which no allowlist holds
_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include(?:_next)?\b[ \t]*([<"]?)([^>"\n]*)', re.MULTILINE)
_EXTERN_C = re.compile(r'\bextern\s*"C"\s*')
_IDENT = re.compile(r"[A-Za-z_]\w*")
_QUALIFIERS = {"const", "volatile", "__restrict__", "__restrict", "restrict", "__grid_constant__",
               "struct", "signed"}

# Scalar C types the harness can pass: normalised spelling -> (ctypes name, bytes, kind)
SCALAR_TYPES: dict[str, tuple[str, int, str]] = {}
for _names, _entry in (
    (("int", "int32_t", "signed int"), ("c_int32", 4, "int")),
    (("unsigned", "unsigned int", "uint32_t"), ("c_uint32", 4, "int")),
    (("long", "long int", "long long", "long long int", "int64_t", "ptrdiff_t", "intptr_t",
      "ssize_t"), ("c_int64", 8, "int")),
    (("unsigned long", "unsigned long int", "unsigned long long", "unsigned long long int",
      "uint64_t", "size_t", "uintptr_t"), ("c_uint64", 8, "int")),
    (("short", "short int", "int16_t"), ("c_int16", 2, "int")),
    (("unsigned short", "unsigned short int", "uint16_t"), ("c_uint16", 2, "int")),
    (("char", "signed char", "int8_t"), ("c_int8", 1, "int")),
    (("unsigned char", "uint8_t"), ("c_uint8", 1, "int")),
    (("bool",), ("c_bool", 1, "int")),
    (("float",), ("c_float", 4, "float")),
    (("double",), ("c_double", 8, "float")),
    (("__half", "half"), ("c_uint16", 2, "half")),
    (("__nv_bfloat16", "nv_bfloat16"), ("c_uint16", 2, "bfloat16")),
):
    for _n in _names:
        SCALAR_TYPES[_n] = _entry

# Pointer base types -> torch dtype names a tensor passed there may have (absent: any dtype)
POINTER_DTYPES: dict[str, frozenset[str]] = {}
for _names, _dtypes in (
    (("float", "float2", "float4"), ("float32",)),
    (("double", "double2"), ("float64",)),
    (("__half", "half", "__half2", "half2"), ("float16",)),
    (("__nv_bfloat16", "nv_bfloat16", "__nv_bfloat162", "nv_bfloat162"), ("bfloat16",)),
    (("int", "int32_t", "int2", "int4"), ("int32",)),
    (("unsigned", "unsigned int", "uint32_t"), ("int32", "uint32")),
    (("long long", "long long int", "int64_t", "long", "longlong2"), ("int64",)),
    (("unsigned long long", "uint64_t", "size_t"), ("int64", "uint64")),
    (("short", "int16_t"), ("int16", "float16", "bfloat16")),
    (("unsigned short", "uint16_t", "ushort2", "ushort4"), ("int16", "uint16", "float16", "bfloat16")),
    (("signed char", "int8_t"), ("int8",)),
    (("unsigned char", "uint8_t"), ("uint8", "bool")),
    (("bool",), ("bool",)),
):
    for _n in _names:
        POINTER_DTYPES[_n] = frozenset(_dtypes)


@dataclass(frozen=True)
class Param:
    name: str
    ctype: str  # normalised, without qualifiers or '*': "float", "unsigned int", "__nv_bfloat16"
    pointer: bool

    def describe(self) -> str:
        return f"{self.ctype}{'*' if self.pointer else ''} {self.name}"


@dataclass(frozen=True)
class Kernel:
    name: str
    params: tuple[Param, ...]
    line: int


class SignatureError(ValueError):
    def __init__(self, message: str, line: int = 0) -> None:
        super().__init__(message)
        self.message, self.line = message, line


def strip_comments(source: str, keep_strings: bool = True) -> str:
    """Comments replaced by spaces (newlines kept, so line numbers stay right); string and
    character literals kept, or blanked with ``keep_strings=False``."""
    def sub(m: re.Match[str]) -> str:
        text = m.group(0)
        if text[0] in "\"'" and keep_strings:
            return text
        if text[0] in "\"'":
            return text[0] + re.sub(r"[^\n]", " ", text[1:-1]) + text[-1]
        return re.sub(r"[^\n]", " ", text)

    return _COMMENT_OR_STRING.sub(sub, source)


def splice(source: str) -> str:
    """Translation phases 1-2 as far as the rules care: backslash-newline continuations
    joined (each joined line's newline moved after its logical line, so line numbers of the
    lines that follow stay right), and the `%:` digraph and `??=` trigraph read as `#`.
    Without it `#inc\\<newline>lude H`, `%:include` or `clo\\<newline>ck64()` hide from the
    rules that read the text."""
    out: list[str] = []
    pending = 0
    for line in source.split("\n"):
        if line.endswith("\\"):
            if pending:
                out[-1] += line[:-1]
            else:
                out.append(line[:-1])
            pending += 1
            continue
        if pending:
            out[-1] += line
            out.extend([""] * pending)
            pending = 0
        else:
            out.append(line)
    return "\n".join(out).replace("%:", "#").replace("??=", "#")


def line_of(source: str, offset: int) -> int:
    return source.count("\n", 0, offset) + 1


def includes(source: str) -> list[tuple[str, int]]:
    """(header, line) of every ``#include`` outside comments (a macro operand: its text)."""
    code = strip_comments(splice(source))
    return [(m.group(2).strip(), line_of(code, m.start())) for m in _INCLUDE.finditer(code)]


def balanced_end(code: str, start: int) -> int:
    """Index just past the parenthesis group opening at ``code[start] == '('``."""
    depth = 0
    for i in range(start, len(code)):
        if code[i] == "(":
            depth += 1
        elif code[i] == ")":
            depth -= 1
            if depth == 0:
                return i + 1
    raise SignatureError("unbalanced parentheses", line_of(code, start))


def kernels(source: str) -> dict[str, Kernel]:
    """Every ``extern "C" __global__ void name(params)`` of the source, by name."""
    code = strip_comments(source)
    found: dict[str, Kernel] = {}
    for m in _EXTERN_C.finditer(code):
        pos, seen_global = m.end(), False
        name = None
        while pos < len(code):
            while pos < len(code) and code[pos].isspace():
                pos += 1
            ident = _IDENT.match(code, pos)
            if ident is None:
                break
            word, pos = ident.group(0), ident.end()
            if word == "__launch_bounds__":
                while pos < len(code) and code[pos].isspace():
                    pos += 1
                if pos >= len(code) or code[pos] != "(":
                    raise SignatureError("__launch_bounds__ without arguments", line_of(code, pos))
                pos = balanced_end(code, pos)
            elif word == "__global__":
                seen_global = True
            elif word in ("void", "static", "inline", "__forceinline__", "__noinline__"):
                continue
            else:
                name = word
                break
        if not seen_global or name is None:
            continue  # an extern "C" device function or declaration: not a kernel
        while pos < len(code) and code[pos].isspace():
            pos += 1
        line = line_of(code, m.start())
        if pos >= len(code) or code[pos] != "(":
            raise SignatureError(f"kernel {name}: expected a parameter list", line)
        end = balanced_end(code, pos)
        params = _params(code[pos + 1:end - 1], name, line)
        if name in found and found[name].params != params:
            raise SignatureError(f"kernel {name} is declared twice with different parameters", line)
        found[name] = Kernel(name, params, line)
    return found


def _params(text: str, kernel: str, line: int) -> tuple[Param, ...]:
    text = " ".join(text.split())
    if text in ("", "void"):
        return ()
    out: list[Param] = []
    depth, start = 0, 0
    pieces: list[str] = []
    for i, ch in enumerate(text):
        if ch in "(<[":
            depth += 1
        elif ch in ")>]":
            depth -= 1
        elif ch == "," and depth == 0:
            pieces.append(text[start:i])
            start = i + 1
    pieces.append(text[start:])
    for raw in pieces:
        piece = raw.strip()
        if "=" in piece or "&" in piece or "..." in piece or "<" in piece:
            raise SignatureError(f"kernel {kernel}: parameter `{piece}` is not supported "
                                 "(plain scalars and pointers only)", line)
        array = piece.endswith("]")
        piece = re.sub(r"\[\s*\]$", "", piece)
        pointer = array or "*" in piece
        words = _IDENT.findall(piece.replace("*", " "))
        if len(words) < 2:
            raise SignatureError(f"kernel {kernel}: parameter `{raw.strip()}` needs a type "
                                 "and a name", line)
        name = words[-1]
        ctype = " ".join(w for w in words[:-1] if w not in _QUALIFIERS)
        if piece.count("*") > 1:
            raise SignatureError(f"kernel {kernel}: `{raw.strip()}`: pointers to pointers are "
                                 "not supported", line)
        if not pointer and ctype not in SCALAR_TYPES:
            raise SignatureError(f"kernel {kernel}: scalar parameter `{raw.strip()}` has a type "
                                 f"the harness cannot pass (use one of int, unsigned, long long, "
                                 f"size_t, float, double, bool)", line)
        out.append(Param(name, ctype, pointer))
    return tuple(out)
