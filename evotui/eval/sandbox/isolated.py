"""Run one function in a fresh, confined process forked from this (clean) worker.

The worker has imported torch and Triton but never runs candidate code itself. For every
candidate it forks a child that leads a new process group, enters its namespaces, hides the
host's socket folders and forks the candidate's process. That one sets its limits,
environment, Landlock rules and seccomp filter, runs the function and writes its JSON answer
to a pipe. Nothing survives it: its memory goes with it, and once it has answered (or timed
out) the worker kills the whole process group, which nothing it started can leave.
"""

from __future__ import annotations

import json
import os
import select
import signal
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from evotui.eval.sandbox import landlock, namespaces, seccomp
from evotui.eval.sandbox.policy import Confinement

MAX_ANSWER_BYTES = 64 * 1024 * 1024
_FAILED_TO_CONFINE = 71


@dataclass(frozen=True)
class Outcome:
    answer: dict[str, Any] | None  # None: no (readable) answer came back
    exit_status: int | None  # as os.waitstatus_to_exitcode gives it
    timed_out: bool = False
    error: str = ""


def confine(confinement: Confinement | None) -> None:
    """Limits, environment and filesystem/syscall rules, in that order; in a process of one
    thread, inside its namespaces. ``None`` keeps only the fresh process."""
    if confinement is None:
        return
    confinement.limits.apply()
    env = confinement.environment()
    os.environ.clear()
    os.environ.update(env)
    tempfile.tempdir = confinement.scratch  # the worker's choice is cached in the module
    os.makedirs(env["TRITON_CACHE_DIR"], exist_ok=True)
    os.chdir(confinement.scratch)
    namespaces.drop_capabilities()
    grants = confinement.grants()
    seccomp.install()  # sets no_new_privs, which Landlock needs too
    landlock.restrict(grants)


def _close_fds_except(fd: int) -> None:
    """Every inherited descriptor but stdio and ``fd`` (the worker's socket to the pool too)."""
    os.closerange(3, fd)
    os.closerange(fd + 1, os.sysconf("SC_OPEN_MAX"))


def _send(write_fd: int, answer: dict[str, Any]) -> None:
    view = memoryview(json.dumps(answer, default=str).encode())
    while view:
        view = view[os.write(write_fd, view):]


def _candidate(write_fd: int, state: Any, body: Callable[[Any], dict[str, Any]],
               confinement: Confinement | None) -> None:
    """The candidate's side of the request; never returns."""
    try:
        namespaces.set_parent_death_signal(signal.SIGKILL)
        _close_fds_except(write_fd)
        try:
            confine(confinement)
        except OSError as e:
            _send(write_fd, {"ok": False, "reason": "sandbox_unavailable",
                             "message": f"could not confine the candidate: {e}"})
            os._exit(_FAILED_TO_CONFINE)
        answer = body(state)
    except BaseException as e:  # noqa: BLE001 - whatever happened, answer something
        answer = {"ok": False, "reason": "harness_error", "message": f"{type(e).__name__}: {e}",
                  "traceback": traceback.format_exc()[-4000:]}
    _send(write_fd, answer)
    os._exit(0)


def _leader(read_fd: int, write_fd: int, prepare: Callable[[], Any],
            body: Callable[[Any], dict[str, Any]], confinement: Confinement | None) -> None:
    """The forked child: its own process group and namespaces; never returns."""
    try:
        os.close(read_fd)
        os.setpgid(0, 0)
        namespaces.set_parent_death_signal(signal.SIGKILL)
        try:  # the harness's own set-up (the task file), before the namespaces hide it
            state = prepare()
        except BaseException as e:  # noqa: BLE001 - a failure it names is the answer
            _send(write_fd, {"ok": False, "reason": getattr(e, "reason", "harness_error"),
                             "message": getattr(e, "message", f"{type(e).__name__}: {e}")})
            os._exit(0)
        if confinement is not None:
            namespaces.enter()
            namespaces.hide_socket_folders(keep=[g.path for g in confinement.grants()])
        pid = os.fork()
        if pid == 0:
            _candidate(write_fd, state, body, confinement)
        os.close(write_fd)
        code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
        os._exit(code if code >= 0 else 128 - code)
    except BaseException as e:  # noqa: BLE001
        try:
            _send(write_fd, {"ok": False, "reason": "sandbox_unavailable",
                             "message": f"could not isolate the candidate: {e}"})
        finally:
            os._exit(_FAILED_TO_CONFINE)


def _end(pid: int, grace_s: float) -> int:
    """The leader's exit code, after ``grace_s`` for it to exit with its child's; then its
    whole process group is killed (before the leader is reaped, so the group's id is still
    its own) and the leader reaped."""
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            break
        time.sleep(0.005)
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    return 128 - code if code > 128 else code  # 128 + N: the candidate died of signal N


def run_isolated(prepare: Callable[[], Any], body: Callable[[Any], dict[str, Any]],
                 confinement: Confinement | None, timeout_s: float) -> Outcome:
    """``body(prepare())`` in a fresh process; ``prepare`` runs there before confinement
    (single-threaded: a process with threads cannot enter a user namespace)."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        _leader(read_fd, write_fd, prepare, body, confinement)
    os.close(write_fd)
    try:
        os.setpgid(pid, pid)  # also here: killpg must find the group even if the child is slow
    except OSError:
        pass
    chunks: list[bytes] = []
    size, timed_out = 0, False
    deadline = time.monotonic() + timeout_s
    try:
        while size <= MAX_ANSWER_BYTES:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            ready, _, _ = select.select([read_fd], [], [], min(remaining, 1.0))
            if ready:
                chunk = os.read(read_fd, 1 << 20)
                if not chunk:
                    break
                size += len(chunk)
                chunks.append(chunk)
    finally:
        os.close(read_fd)
        code = _end(pid, grace_s=0.0 if timed_out else 5.0)
    if timed_out:
        return Outcome(None, code, timed_out=True)
    if size > MAX_ANSWER_BYTES:
        return Outcome(None, code, error=f"answered more than {MAX_ANSWER_BYTES >> 20} MiB")
    try:
        answer = json.loads(b"".join(chunks)) if chunks else None
    except ValueError:
        return Outcome(None, code, error="its answer was not one JSON object")
    if answer is not None and not isinstance(answer, dict):
        return Outcome(None, code, error="its answer was not one JSON object")
    return Outcome(answer, code)
