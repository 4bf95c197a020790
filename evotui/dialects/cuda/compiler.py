"""NVRTC: device code to CUBIN for one architecture, cached by a hash of everything that
goes in. Needs only ``cuda.bindings.nvrtc`` and the NVRTC library (the ``nvidia-cuda-nvrtc``
wheel): no GPU, no torch. The parent compiles each candidate through ``compile_isolated``
(a short-lived subprocess, so that a compiler hang or crash costs a ``compile_error``, not
the engine); the worker compiles in-process with ``compile_cubin``.

``python -m evotui.dialects.cuda.compiler`` reads one JSON request on stdin and writes one
JSON answer on stdout (what ``compile_isolated`` runs).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import evotui.dialects.cuda.ptx_rules as ptx_rules

PROGRAM_NAME = "candidate.cu"
MAX_LOG_CHARS = 1500
BASE_OPTIONS = ("-std=c++17", "-default-device")
COMPILE_TIMEOUT_S = 60.0
_CACHE: dict[str, bytes] = {}


class NvrtcUnavailable(RuntimeError):
    """cuda-python or the NVRTC library is missing on this machine."""


class CompileError(Exception):
    def __init__(self, log: str) -> None:
        super().__init__(log)
        self.log = log


class ForbiddenCode(CompileError):
    """It compiles, but the PTX breaks a rule of ``ptx_rules`` (a clock, the heap, state
    that survives a call, a write to an input): ``forbidden_construct``."""


@dataclass(frozen=True)
class CompileRequest:
    source: str
    arch: str  # "sm_90"
    defines: tuple[tuple[str, int], ...] = ()
    options: tuple[str, ...] = ()
    kernels: tuple[str, ...] = ()  # names that must be in the compiled module
    readonly: tuple[tuple[str, int], ...] = ()  # (kernel, parameter index) given an input tensor
    check_ptx: bool = True  # apply ptx_rules (off only for the harness's runtime-check tests)

    def key(self) -> str:
        text = json.dumps([self.source, self.arch, list(self.defines), list(self.options),
                           [list(r) for r in self.readonly], self.check_ptx, nvrtc_version(),
                           include_dirs()])
        return hashlib.sha256(text.encode()).hexdigest()

    def argv(self) -> list[str]:
        args = [f"-arch={self.arch}", *BASE_OPTIONS]
        args += [f"-I{d}" for d in include_dirs()]
        args += [f"-D{name}={value}" for name, value in self.defines]
        return args + list(self.options)


def _nvrtc():
    try:
        from cuda.bindings import nvrtc
    except ImportError as e:
        raise NvrtcUnavailable(f"cuda-python is not installed ({e}): pip install cuda-python "
                               "nvidia-cuda-nvrtc") from None
    return nvrtc


@lru_cache(maxsize=1)
def nvrtc_version() -> str:
    nvrtc = _nvrtc()
    try:
        err, major, minor = nvrtc.nvrtcVersion()
    except Exception as e:  # the library itself is missing (DynamicLibNotFoundError, OSError)
        raise NvrtcUnavailable(f"the NVRTC library cannot be loaded ({type(e).__name__}: {e}); "
                               "pip install nvidia-cuda-nvrtc") from None
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise NvrtcUnavailable(f"nvrtcVersion failed: {err}")
    return f"{major}.{minor}"


def available() -> tuple[bool, str]:
    """(whether NVRTC can compile here, the version or why not)."""
    try:
        return True, nvrtc_version()
    except NvrtcUnavailable as e:
        return False, str(e)


@lru_cache(maxsize=1)
def include_dirs() -> tuple[str, ...]:
    """Where the CUDA headers candidates may include (cuda_fp16.h, cuda_bf16.h, ...) live:
    $EVOTUI_CUDA_INCLUDE, the nvidia wheels, $CUDA_HOME, /usr/local/cuda, Triton's copy."""
    candidates: list[Path] = []
    if os.environ.get("EVOTUI_CUDA_INCLUDE"):
        candidates += [Path(p) for p in os.environ["EVOTUI_CUDA_INCLUDE"].split(os.pathsep)]
    for entry in sys.path:
        base = Path(entry) / "nvidia"
        candidates += [base / "cu13" / "include", base / "cuda_runtime" / "include"]
    for var in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(var):
            candidates.append(Path(os.environ[var]) / "include")
    candidates.append(Path("/usr/local/cuda/include"))
    try:
        import importlib.util

        spec = importlib.util.find_spec("triton")
        if spec is not None and spec.origin:
            candidates.append(Path(spec.origin).parent / "backends" / "nvidia" / "include")
    except (ImportError, ValueError):
        pass
    for d in candidates:
        if (d / "cuda_fp16.h").is_file() and (d / "cuda_bf16.h").is_file():
            return (str(d),)  # one consistent set of headers
    return ()


def _check(result, what: str):
    nvrtc = _nvrtc()
    err, *rest = result if isinstance(result, tuple) else (result,)
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        raise RuntimeError(f"{what}: {err}")
    return rest[0] if len(rest) == 1 else rest


def compile_cubin(req: CompileRequest) -> bytes:
    """The CUBIN for ``req``; raises CompileError with the trimmed log on a compile error."""
    key = req.key()
    if key in _CACHE:
        return _CACHE[key]
    nvrtc = _nvrtc()
    nvrtc_version()
    prog = _check(nvrtc.nvrtcCreateProgram(req.source.encode(), PROGRAM_NAME.encode(), 0, [], []),
                  "nvrtcCreateProgram")
    try:
        argv = [a.encode() for a in req.argv()]
        err, = nvrtc.nvrtcCompileProgram(prog, len(argv), argv)
        size = _check(nvrtc.nvrtcGetProgramLogSize(prog), "nvrtcGetProgramLogSize")
        raw = b" " * size
        _check(nvrtc.nvrtcGetProgramLog(prog, raw), "nvrtcGetProgramLog")
        log = raw.rstrip(b"\x00 ").decode(errors="replace")
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            raise CompileError(trim_log(log) or f"NVRTC failed: {err}")
        size = _check(nvrtc.nvrtcGetPTXSize(prog), "nvrtcGetPTXSize")
        ptx = b" " * size
        _check(nvrtc.nvrtcGetPTX(prog, ptx), "nvrtcGetPTX")
        size = _check(nvrtc.nvrtcGetCUBINSize(prog), "nvrtcGetCUBINSize")
        cubin = b" " * size
        _check(nvrtc.nvrtcGetCUBIN(prog, cubin), "nvrtcGetCUBIN")
    finally:
        nvrtc.nvrtcDestroyProgram(prog)
    violation = ptx_rules.check(ptx.rstrip(b"\x00 ").decode(errors="replace"), req.readonly) \
        if req.check_ptx else None
    if violation is not None:
        raise ForbiddenCode(violation)
    missing = [k for k in req.kernels if f".text.{k}\x00".encode() not in cubin]
    if missing:
        raise CompileError(f"kernel(s) {', '.join(missing)} are not in the compiled module: "
                           'declare them `extern "C" __global__` outside any #if')
    _CACHE[key] = cubin
    return cubin


def trim_log(log: str, limit: int = MAX_LOG_CHARS) -> str:
    """The compiler's errors, first ones first, without warnings' noise, within ``limit``."""
    lines = [ln.rstrip() for ln in log.splitlines() if ln.strip()]
    lines = [re.sub(r"^.*?candidate\.cu\((\d+)\)", r"CUDA_SOURCE line \1", ln) for ln in lines]
    errors = [i for i, ln in enumerate(lines) if "error" in ln.lower()]
    keep: list[str] = []
    for i in errors or range(len(lines)):
        for ln in lines[i:i + 3] if errors else [lines[i]]:
            if ln not in keep[-3:]:
                keep.append(ln)
    text = "\n".join(keep)
    return text if len(text) <= limit else text[:limit - 12].rstrip() + "\n… (cut)"


# -- the isolated compile the parent runs ---------------------------------------------------
# ``arch="auto:N"`` asks the subprocess to use GPU N's architecture: it queries the driver, so
# that the parent never has to; the answer is remembered here for the next compiles.
_RESOLVED_ARCH: dict[str, str] = {}


def compile_isolated(req: CompileRequest, timeout_s: float = COMPILE_TIMEOUT_S) -> tuple[str, str]:
    """Compile in a subprocess: ("ok", ""), ("compile_error", log), ("forbidden", why: the
    PTX breaks a rule), ("timeout", why) or ("unavailable", why)."""
    arch = _RESOLVED_ARCH.get(req.arch, req.arch)
    payload = json.dumps({"source": req.source, "arch": arch, "defines": req.defines,
                          "options": req.options, "kernels": req.kernels,
                          "readonly": req.readonly})
    root = str(Path(__file__).resolve().parents[3])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
    try:
        p = subprocess.run([sys.executable, "-m", "evotui.dialects.cuda.compiler"], input=payload,
                           capture_output=True, text=True, timeout=timeout_s, env=env)
    except subprocess.TimeoutExpired:
        return "timeout", f"NVRTC did not finish compiling within {timeout_s:.0f} s"
    try:
        answer = json.loads(p.stdout.strip().splitlines()[-1])
    except (json.JSONDecodeError, IndexError):
        return "compile_error", f"the compiler process died (exit {p.returncode}): {p.stderr[-500:]}"
    if arch.startswith("auto") and answer.get("arch"):
        _RESOLVED_ARCH[req.arch] = str(answer["arch"])
    return str(answer["status"]), str(answer.get("message", ""))


def main() -> int:
    raw = json.loads(sys.stdin.read())
    arch = str(raw["arch"])
    if arch.startswith("auto"):
        from evotui.dialects.cuda.device import compile_arch

        arch = compile_arch(int(arch.partition(":")[2] or 0))
    req = CompileRequest(source=raw["source"], arch=arch,
                         defines=tuple((str(k), int(v)) for k, v in raw["defines"]),
                         options=tuple(raw["options"]), kernels=tuple(raw["kernels"]),
                         readonly=tuple((str(k), int(i)) for k, i in raw.get("readonly", ())))
    try:
        compile_cubin(req)
        answer = {"status": "ok"}
    except ForbiddenCode as e:
        answer = {"status": "forbidden", "message": e.log}
    except CompileError as e:
        answer = {"status": "compile_error", "message": e.log}
    except NvrtcUnavailable as e:
        answer = {"status": "unavailable", "message": str(e)}
    except RuntimeError as e:
        answer = {"status": "compile_error", "message": f"NVRTC failed: {e}"}
    print(json.dumps({**answer, "arch": arch}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
