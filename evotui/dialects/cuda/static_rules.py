"""Static rules for CUDA candidates, checked in the parent before anything is compiled.

The file holds only literals (``spec.parse_spec``): there is no host code to cheat with, so
streams, timers, threads, patching and result forgery are impossible by construction. What is
left is the device code. A cheat in device code needs one of:

- state that survives between calls (to replay or skip work while being timed): mutable
  ``__device__``/``__managed__`` globals, function-level ``static`` variables, the device heap
  (``malloc``/``new``) — all forbidden; ``__constant__`` is read-only on the device and allowed.
  Scratch buffers are zero-filled by the harness on every call;
- a clock, to behave differently when called back-to-back: ``clock()``, ``clock64()``,
  ``%globaltimer``/``%clock`` in inline PTX — forbidden (other inline PTX is allowed: it is how
  ``cp.async``, ``ldmatrix`` or ``mma`` are written);
- host facilities reachable from the device: the device runtime (``cuda*`` calls, ``<<<``
  launches) — forbidden;
- other code: ``#include`` is limited to a short list of CUDA headers.

Then the launch spec is checked against the kernels' parameter lists (arity, pointers get bare
tensor names). Compile errors come from NVRTC itself (``compiler.py``).

These rules read the text before the preprocessor (macros, token pasting and string
concatenation get around them); the binding versions run on the PTX after the compile
(``ptx_rules.py``).
"""

from __future__ import annotations

import re

import evotui.dialects.cuda.device_code as device_code
from evotui.core import reasons
from evotui.dialects.base import StaticIssue
from evotui.dialects.cuda.spec import CandidateSpec, SpecError, parse_spec

ALLOWED_HEADERS = frozenset({
    "cuda_fp16.h", "cuda_bf16.h", "cuda_fp8.h", "cuda_pipeline.h", "cuda_pipeline_primitives.h",
    "cooperative_groups.h", "cooperative_groups/reduce.h", "cooperative_groups/memcpy_async.h",
    "mma.h", "cuda/std/cstdint", "cuda/std/limits", "cuda/std/type_traits", "stdint.h",
    "cstdint", "float.h", "cfloat", "math_constants.h",
})

# (pattern on code without comments, message). Strings are blanked except inside asm(...).
_FORBIDDEN: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b(clock|clock64)\s*\("), "reads a clock (`clock()`/`clock64()`)"),
    (re.compile(r"%+(globaltimer|clock64|clock|clock_hi|globaltimer_lo|globaltimer_hi)\b"),
     "reads a clock register in inline PTX (%globaltimer/%clock)"),
    (re.compile(r"\b__managed__\b"), "declares `__managed__` memory (state across calls)"),
    (re.compile(r"\b(malloc|free|realloc|calloc|memalign)\s*\("),
     "uses the device heap (state across calls)"),
    (re.compile(r"(?<![\w.])(new|delete)\b(?!\s*\()"),
     "uses the device heap (`new`/`delete`)"),
    (re.compile(r"<<<"), "launches kernels from the device (dynamic parallelism)"),
    (re.compile(r"\bcuda[A-Z]\w*\s*\("), "calls the CUDA runtime from the device"),
    (re.compile(r"\.global\s+(\.align\s+\d+\s+)?\.(u|s|b|f)\d+\s+\w+"),
     "declares a global variable in inline PTX (state across calls)"),
)
_ASM = re.compile(r"\b(asm|__asm__|__asm)\b\s*(volatile\b|__volatile__\b)?\s*\(")
_DEVICE_VAR_END = re.compile(r"[(;=\[{]")
_STATIC_OK = re.compile(r"\s*(const\b|constexpr\b|__device__|__host__|__forceinline__|"
                        r"__inline__|inline\b|__global__|__shared__|__constant__|"
                        r"__noinline__|void\b)")


def check_source(source: str) -> StaticIssue | None:
    """The first rule the candidate breaks, or None (compile errors are checked separately)."""
    try:
        spec = parse_spec(source)
    except SpecError as e:
        return StaticIssue(e.reason, e.message, e.line)
    return check_spec(spec)


def check_spec(spec: CandidateSpec) -> StaticIssue | None:
    # device-code problems are located by their line inside CUDA_SOURCE (as NVRTC does)
    issue = _check_device_code(spec.cuda_source)
    if issue is not None:
        return StaticIssue(issue.reason, f"CUDA_SOURCE line {issue.line}: {issue.message}", 0)
    try:
        found = device_code.kernels(spec.cuda_source)
    except device_code.SignatureError as e:
        return StaticIssue(reasons.BAD_INTERFACE, f"CUDA_SOURCE line {e.line}: {e.message}", 0)
    return _check_launches(spec, found)


def _check_device_code(cuda: str) -> StaticIssue | None:
    for header, line in device_code.includes(cuda):
        if header not in ALLOWED_HEADERS:
            return StaticIssue(reasons.FORBIDDEN_IMPORT,
                               f"#include <{header}> (allowed: {', '.join(sorted(ALLOWED_HEADERS))})",
                               line)
    code = _blank_strings_outside_asm(device_code.strip_comments(device_code.splice(cuda)))
    for pattern, message in _FORBIDDEN:
        m = pattern.search(code)
        if m:
            return StaticIssue(reasons.FORBIDDEN_CONSTRUCT, message,
                               device_code.line_of(code, m.start()))
    for m in re.finditer(r"\b__device__\b", code):
        end = _DEVICE_VAR_END.search(code, m.end())
        if end is not None and end.group(0) not in "({":
            start = max(code.rfind(c, 0, m.start()) for c in ";{}")  # this declaration only
            if "__constant__" not in code[start + 1:end.start()]:
                return StaticIssue(reasons.FORBIDDEN_CONSTRUCT,
                                   "declares a `__device__` variable (global state that survives "
                                   "between calls); use `__constant__` for tables",
                                   device_code.line_of(code, m.start()))
    for m in re.finditer(r"\bstatic\b", code):
        if not _STATIC_OK.match(code, m.end()):
            return StaticIssue(reasons.FORBIDDEN_CONSTRUCT,
                               "a `static` variable keeps state between calls (only `static const`, "
                               "`static __shared__` and static functions are allowed)",
                               device_code.line_of(code, m.start()))
    return None


def _blank_strings_outside_asm(code: str) -> str:
    """String literals blanked, except those inside ``asm(...)`` (their PTX is checked)."""
    asm_spans = []
    for m in _ASM.finditer(code):
        try:
            asm_spans.append((m.start(), device_code.balanced_end(code, m.end() - 1)))
        except device_code.SignatureError:
            asm_spans.append((m.start(), len(code)))

    def sub(m: re.Match[str]) -> str:
        if any(a <= m.start() < b for a, b in asm_spans):
            return m.group(0)
        return '"' + " " * (len(m.group(0)) - 2) + '"'

    return re.sub(r'"(?:\\.|[^"\\\n])*"', sub, code)


def _check_launches(spec: CandidateSpec, found: dict[str, device_code.Kernel]) -> StaticIssue | None:
    if not found:
        return StaticIssue(reasons.BAD_INTERFACE,
                           'CUDA_SOURCE defines no `extern "C" __global__ void name(...)` kernel', 0)
    buffers = {b.name for b in spec.outputs} | {b.name for b in spec.scratch}
    scalars = {n for n, _ in spec.symbols} | set(spec.constants)
    for i, launch in enumerate(spec.launches):
        where = f"LAUNCH[{i}] ({launch.kernel})"
        kernel = found.get(launch.kernel)
        if kernel is None:
            return StaticIssue(reasons.BAD_INTERFACE,
                               f'{where}: no `extern "C" __global__` kernel of that name in '
                               f"CUDA_SOURCE (kernels: {', '.join(sorted(found))})", 0)
        if len(launch.args) != len(kernel.params):
            sig = ", ".join(p.describe() for p in kernel.params)
            return StaticIssue(reasons.BAD_INTERFACE,
                               f"{where}: {len(launch.args)} args for a kernel of "
                               f"{len(kernel.params)} parameters ({sig})", 0)
        for arg, param in zip(launch.args, kernel.params, strict=True):
            bare = arg.text if arg.text.isidentifier() else None
            if param.pointer and (bare is None or bare in scalars):
                return StaticIssue(reasons.BAD_INTERFACE,
                                   f"{where}: parameter `{param.describe()}` takes a tensor; "
                                   f"pass the tensor's name, not `{arg.text}`", 0)
            if not param.pointer and bare is not None and bare in buffers:
                return StaticIssue(reasons.BAD_INTERFACE,
                                   f"{where}: parameter `{param.describe()}` is a scalar but "
                                   f"`{bare}` is a tensor", 0)
    return None


def readonly_params(spec: CandidateSpec) -> tuple[tuple[str, int], ...]:
    """(kernel, parameter index) of every pointer parameter a launch gives a tensor that is
    not one of the candidate's OUTPUTS or SCRATCH buffers (an input, or a weight of the
    task's Model): the PTX rules refuse writes through them (``ptx_rules``)."""
    try:
        found = device_code.kernels(spec.cuda_source)
    except device_code.SignatureError:
        return ()
    buffers = {b.name for b in spec.outputs} | {b.name for b in spec.scratch}
    out: set[tuple[str, int]] = set()
    for launch in spec.launches:
        kernel = found.get(launch.kernel)
        if kernel is None:
            continue
        for i, (arg, param) in enumerate(zip(launch.args, kernel.params, strict=False)):
            if param.pointer and arg.text.isidentifier() and arg.text not in buffers:
                out.add((launch.kernel, i))
    return tuple(sorted(out))
