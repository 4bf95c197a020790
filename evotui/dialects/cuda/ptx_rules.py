"""Rules on the PTX that NVRTC made of a candidate: what the device code *does*, after the
preprocessor, templates and inline assembly, so no spelling gets around them.

The source rules (``static_rules.py``) read the text before the preprocessor: ``#define``,
token pasting (``##``), line splices, digraphs, a namespace-scope variable that
``-default-device`` makes a ``__device__`` one, ``__device__ int n{0};``, a
``const_cast`` of a ``static const`` table, string concatenation inside ``asm(...)``... all
got past them. Here, on the compiled module:

- **no clock**: the special registers ``%globaltimer*``, ``%clock*``, ``%pm0..7`` and
  ``%gridid`` (a per-launch counter) are never read;
- **no heap, no device runtime**: the only external functions are ``vprintf`` and
  ``__assertfail`` (``printf``/``assert``);
- **no state that survives a call**: module variables (``.global``, ``.const``) are only
  read. Their addresses, and the tensors the launch spec passes as inputs or the task's
  weights (``readonly``), may flow through arithmetic into loads; any other use — a store
  or atomic through them, storing the address itself, passing it to a function other than
  ``vprintf`` — is refused. A variable's initialiser may not hold an address.

The analysis is per function and flow-insensitive (a register tainted anywhere is tainted
everywhere in its function), which over-approximates; honest code loads through such
pointers and never writes through them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

ALLOWED_EXTERN_FUNCS = frozenset({"vprintf", "__assertfail"})
_CLOCKS = re.compile(r"%(globaltimer(?:_lo|_hi)?|clock(?:_hi|64)?|pm[0-7](?:_64)?|gridid)\b")
_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.DOTALL)
_VAR_DECL = re.compile(
    r"^[ \t]*((?:\.(?:visible|extern|weak|common)\s+)*)\.(global|const)\s+([^;=]*?)"
    r"([\w$]+)\s*(\[[^\]]*\])?\s*(=\s*\{[^}]*\}|=\s*[^;]+)?;", re.MULTILINE)
_EXTERN_FUNC = re.compile(r"\.extern\s+\.func\s+(?:\([^)]*\)\s*)?([\w$]+)")
_FUNC_HEADER = re.compile(r"\.(entry|func)\s+(?:\([^)]*\)\s*)?([\w$]+)\s*\(")
_VECTOR = re.compile(r"\{(\s*[%_][^{};]*)\}")
_TOKEN = re.compile(r"%?[A-Za-z_$][\w$]*")
_LABEL = re.compile(r"^\s*(?:[\w$]+:\s*)+")
_PREDICATE = re.compile(r"^@!?%?[\w$]+\s+")

# results carry the taint of their operands
_PROPAGATE = frozenset({
    "mov", "cvta", "add", "sub", "mul", "mad", "mul24", "mad24", "shl", "shr", "and", "or",
    "xor", "not", "neg", "selp", "slct", "cvt", "min", "max", "abs", "bfe", "bfi", "prmt",
    "shf", "div", "rem", "sad", "lop3", "addc", "subc", "madc", "popc", "clz", "brev",
    "bfind", "fns", "shfl"})
# reads: a tainted address may appear after the first operand (the destination)
_READS = frozenset({"ld", "ldu", "cp", "tex", "tld4", "suld"})
# no memory written, nothing derived that could be written through
_HARMLESS = frozenset({"prefetch", "prefetchu", "isspacep", "setp", "set", "applypriority",
                       "createpolicy", "bra", "ret", "exit"})


class PtxViolation(ValueError):
    pass


def check(ptx: str, readonly: Iterable[tuple[str, int]] = ()) -> str | None:
    """The first rule the module breaks, as a message, or None."""
    try:
        _check(ptx, set(readonly))
    except PtxViolation as e:
        return str(e)
    return None


def _check(ptx: str, readonly: set[tuple[str, int]]) -> None:
    text = _COMMENTS.sub(" ", ptx)
    m = _CLOCKS.search(text)
    if m:
        raise PtxViolation(f"reads a clock or launch counter (`%{m.group(1)}` in the compiled "
                           "code): a kernel may not behave differently by time or by call")
    for m in _EXTERN_FUNC.finditer(text):
        if m.group(1) not in ALLOWED_EXTERN_FUNCS:
            raise PtxViolation(f"calls `{m.group(1)}` (the device heap or runtime; only "
                               "printf and assert are available on the device)")
    symbols: dict[str, str] = {}  # module variable -> its state space
    for m in _VAR_DECL.finditer(text):
        prefix, space, name, init = m.group(1), m.group(2), m.group(4), m.group(6) or ""
        if ".extern" in prefix:
            raise PtxViolation(f"declares an external `.{space}` variable `{name}`")
        if re.search(r"[A-Za-z_$]", init.replace("0f", "").replace("0d", "")):
            raise PtxViolation(f"module variable `{name}` is initialised with an address")
        symbols[name] = space
    body = _VECTOR.sub(lambda v: "⟨" + v.group(1) + "⟩", _VAR_DECL.sub(";", text))
    functions = _functions(body)
    tainted_params = {f"{kernel}_param_{i}": f"input parameter {i} of `{kernel}`"
                      for kernel, i in readonly}
    returns: set[str] = set()  # functions that return an address of read-only memory
    for _ in range(50):  # to a fixed point across calls
        before = (len(tainted_params), len(returns))
        for name, statements in functions.items():
            _function(name, statements, symbols, tainted_params, returns)
        if (len(tainted_params), len(returns)) == before:
            break


def _functions(text: str) -> dict[str, list[str]]:
    """Each function's statements (labels and predicates removed), by name."""
    out: dict[str, list[str]] = {}
    for m in _FUNC_HEADER.finditer(text):
        start = text.find("{", m.end())
        if start < 0:
            continue  # a declaration
        if ";" in text[m.end():start] and text[m.end():start].strip().endswith(";"):
            continue
        depth, i = 0, start
        while i < len(text):
            if text[i] == "{":
                depth += 1
            elif text[i] == "}":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        raw = re.split(r"[;{}]", text[start:i])
        statements = []
        for s in raw:
            s = _PREDICATE.sub("", _LABEL.sub("", s.strip()))
            if s and not s.startswith("."):
                statements.append(" ".join(s.split()))
        out[m.group(2)] = statements
    return out


def _operands(statement: str) -> tuple[str, list[str]]:
    opcode, _, rest = statement.partition(" ")
    depth, parts, cur = 0, [], ""
    for ch in rest:
        if ch in "([⟨":
            depth += 1
        elif ch in ")]⟩":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return opcode, [p.strip() for p in parts]


def _function(name: str, statements: list[str], symbols: dict[str, str],
              tainted_params: dict[str, str], returns: set[str]) -> None:
    taint: dict[str, str] = {s: f"module variable `{s}`" for s in symbols}
    taint.update(tainted_params)
    pending: dict[str, str] = {}  # call parameters holding a tainted value
    last_call = ""
    local: str | None = None  # a tainted value stored to local memory (printf's argument pack)
    changed = True
    while changed:
        changed = False
        pending, last_call = {}, ""
        for st in statements:
            opcode, ops = _operands(st)
            base = opcode.split(".")[0]
            tokens = [[t for t in _TOKEN.findall(op) if not t.startswith(("0f", "0d"))]
                      for op in ops]
            # a register destination tainted elsewhere is overwritten here, not read
            reg_dest = bool(ops) and not ops[0].startswith("[")
            hit = [(i, taint[t]) for i, ts in enumerate(tokens) for t in ts
                   if t in taint and not (i == 0 and reg_dest)]
            if base == "call":
                last_call = _call_target(ops)
                if pending:
                    if last_call not in ALLOWED_EXTERN_FUNCS:
                        for pos, arg in enumerate(_call_args(ops)):
                            if arg in pending and f"{last_call}_param_{pos}" not in tainted_params:
                                tainted_params[f"{last_call}_param_{pos}"] = pending[arg]
                    pending = {}
                continue
            if base == "ld" and ".param" in opcode:
                src = " ".join(ops[1:])
                origin = hit[0][1] if hit else None
                if origin is None and re.search(r"\bretval\d+\b", src) and last_call in returns:
                    origin = f"a pointer returned by `{last_call}`"
                if origin is not None:
                    changed |= _taint(taint, tokens[0] if tokens else [], origin)
                continue
            if base == "ld" and ".local" in opcode and local is not None:
                changed |= _taint(taint, tokens[0] if tokens else [], local)
                continue
            if not hit:
                continue
            where, origin = hit[0]
            if base in _PROPAGATE:
                changed |= _taint(taint, tokens[0], origin)
            elif base in _HARMLESS:
                continue
            elif base in _READS and where >= 1:
                continue
            elif base == "st" and ".param" in opcode and ops:
                target = re.sub(r"[\[\]\s]|\+\d+", "", ops[0])
                if target.startswith("func_retval"):
                    returns.add(name)
                elif all(i >= 1 for i, _ in hit):
                    pending[target] = origin
                else:
                    _refuse(st, origin)
            elif base == "st" and ".local" in opcode and where >= 1:
                # e.g. printf("%s", ...) packs the address into a local buffer: allowed, but
                # then whatever is loaded back from local memory carries the taint
                if local is None:
                    local, changed = origin, True
            else:
                _refuse(st, origin)


def _taint(taint: dict[str, str], regs: list[str], origin: str) -> bool:
    new = [r for r in regs if r.startswith("%") and r not in taint]
    for r in new:
        taint[r] = origin
    return bool(new)


def _call_target(ops: list[str]) -> str:
    for op in ops:
        if not op.startswith("("):
            return op.strip()
    return ""


def _call_args(ops: list[str]) -> list[str]:
    after = False
    for op in ops:
        if not op.startswith("("):
            after = True
        elif after:
            return [a.strip() for a in op.strip("()").split(",")]
    return []


def _refuse(statement: str, origin: str) -> None:
    raise PtxViolation(f"writes through, or hands on, the address of {origin} "
                       f"(`{statement[:80]}` in the compiled code): module variables and input "
                       "tensors are read-only (state must not survive a call; use __constant__ "
                       "tables, SCRATCH buffers and OUTPUTS)")
