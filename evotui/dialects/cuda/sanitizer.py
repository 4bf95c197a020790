"""compute-sanitizer on a CUDA candidate, where the machine has it (optional).

Guard bands catch writes just past a buffer; ``memcheck`` catches every invalid global or
shared access, and ``racecheck`` shared-memory races. It is slow (tens of seconds), so the
engine runs it on each would-be new best and ``evotui bench`` on an accepted candidate, both
only when ``compute-sanitizer`` is found (PATH, $CUDA_HOME/bin, /usr/local/cuda/bin).

The candidate runs once at the task's smallest check shape in a fresh process
(``sanitize_run``) under the tool, with torch's caching allocator off so that every buffer is
its own allocation (otherwise an overrun stays inside a cached segment and is invisible). The
verdict is read from the tool's exit code and summary in the calling process.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

TOOL = "compute-sanitizer"
ERROR_EXIT = 86
DEFAULT_TOOLS = ("memcheck",)
_SUMMARY = re.compile(r"ERROR SUMMARY:\s*(\d+)\s+error")


@dataclass(frozen=True)
class SanitizerReport:
    ran: bool  # False: the tool or the harness failed (not the candidate's verdict)
    ok: bool  # ran, and no errors
    tool: str
    errors: int
    message: str  # one line, or the first error's lines
    seconds: float
    log_tail: str = ""

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def find() -> str | None:
    """The compute-sanitizer executable, or None."""
    found = shutil.which(TOOL)
    if found:
        return found
    bases = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    for base in filter(None, bases):
        path = Path(base) / "bin" / TOOL
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    return None


def first_error(log: str, lines: int = 4) -> str:
    """The first reported error of a sanitizer log, as a few lines without the prefixes."""
    body = [ln.removeprefix("=========").strip() for ln in log.splitlines()
            if ln.startswith("=========")]
    body = [ln for ln in body if ln and not ln.startswith(("COMPUTE-SANITIZER", "ERROR SUMMARY",
                                                          "Program hit", "Saved host backtrace",
                                                          "Host Frame"))]
    return " / ".join(body[:lines])


def run(task_path: str, candidate_path: str, *, gpu: str | None = None,
        tools: tuple[str, ...] = DEFAULT_TOOLS, timeout_s: float = 600.0,
        executable: str | None = None) -> SanitizerReport:
    """Run the candidate under each tool in turn; the first one that finds errors decides."""
    exe = executable or find()
    if exe is None:
        return SanitizerReport(False, False, ",".join(tools), 0, f"{TOOL} not found", 0.0)
    root = str(Path(__file__).resolve().parents[3])
    env = {**os.environ, "PYTORCH_NO_CUDA_MEMORY_CACHING": "1", "TRITON_INTERPRET": "0",
           "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}
    if gpu is not None:
        env["CUDA_VISIBLE_DEVICES"] = gpu
    report = SanitizerReport(True, True, ",".join(tools), 0, "no errors", 0.0)
    for tool in tools:
        argv = [exe, "--tool", tool, "--error-exitcode", str(ERROR_EXIT), "--print-limit", "20",
                # torch probes the driver with calls that fail by design: only kernel errors count
                "--report-api-errors", "no",
                sys.executable, "-m", "evotui.dialects.cuda.sanitize_run", task_path,
                candidate_path]
        t0 = time.monotonic()
        try:
            p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s, env=env,
                               stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return SanitizerReport(False, False, tool, 0, f"{tool} did not finish within "
                                   f"{timeout_s:.0f} s", time.monotonic() - t0)
        report = parse(tool, p.returncode, p.stdout + p.stderr, time.monotonic() - t0)
        if not report.ok:
            return report
    return report


def parse(tool: str, returncode: int, log: str, seconds: float) -> SanitizerReport:
    """The verdict from the tool's exit code and its ERROR SUMMARY line — the last one: a
    device `printf` in the candidate could print a summary of its own before the tool's."""
    summaries = _SUMMARY.findall(log)
    errors = int(summaries[-1]) if summaries else 0
    tail = log[-3000:]
    if errors or returncode == ERROR_EXIT:
        what = first_error(log) or "errors reported"
        return SanitizerReport(True, False, tool, max(errors, 1),
                               f"{tool}: {max(errors, 1)} error(s): {what}"[:1500], seconds, tail)
    if returncode != 0 or not summaries:
        last = log.strip().splitlines()[-1] if log.strip() else ""
        return SanitizerReport(False, False, tool, 0,
                               f"{tool} could not run the candidate (exit {returncode}): {last}"[:500],
                               seconds, tail)
    return SanitizerReport(True, True, tool, 0, f"{tool}: no errors", seconds, tail)
