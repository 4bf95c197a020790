"""Run one function in a fresh, confined process forked from this (clean) worker.

The worker has imported torch and Triton but never runs candidate code itself. For every
candidate it forks: the child enters its namespaces and forks the first process of its PID
namespace, which forks the process that sets its limits, environment, Landlock rules and
seccomp filter, runs the function and writes its JSON answer to a pipe. Nothing it does survives it:
its memory goes with it, and when it exits (or its parent is killed) the kernel kills every
process it started.
"""

from __future__ import annotations

import json
import os
import select
import signal
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
    thread, after its namespaces. ``None`` keeps only the fresh process and the environment."""
    if confinement is None:
        return
    confinement.limits.apply()
    env = confinement.environment()
    os.environ.clear()
    os.environ.update(env)
    os.makedirs(env["TRITON_CACHE_DIR"], exist_ok=True)
    os.chdir(confinement.scratch)
    namespaces.drop_capabilities()
    landlock_grants = confinement.grants()
    seccomp.install()  # sets no_new_privs, which Landlock needs too
    landlock.restrict(landlock_grants)


def _close_fds_except(fd: int) -> None:
    """Every inherited descriptor but stdio and ``fd`` (the worker's socket to the pool too)."""
    os.closerange(3, fd)
    os.closerange(fd + 1, os.sysconf("SC_OPEN_MAX"))


def _wait_and_exit(pid: int) -> None:
    """Wait for ``pid`` and exit as it did (a signal as 128 + its number)."""
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    os._exit(code if code >= 0 else 128 - code)


def _namespace_init(write_fd: int, prepare: Callable[[], Any],
                    body: Callable[[Any], dict[str, Any]], confinement: Confinement | None) -> None:
    """The first process of the PID namespace runs no candidate code: the kernel shields an
    init from its own signals, and a candidate must die of what kills any process. When the
    candidate's process ends, this one does, and the kernel kills what is left."""
    namespaces.set_parent_death_signal(signal.SIGKILL)
    pid = os.fork()
    if pid == 0:
        _child(write_fd, prepare, body, confinement)
    os.close(write_fd)
    _wait_and_exit(pid)


def _child(write_fd: int, prepare: Callable[[], Any], body: Callable[[Any], dict[str, Any]],
           confinement: Confinement | None) -> None:
    """Runs the candidate's side of the request; never returns."""
    try:
        namespaces.set_parent_death_signal(signal.SIGKILL)
        _close_fds_except(write_fd)
        state = prepare()  # the harness's own set-up (the task), before confinement
        try:
            confine(confinement)
        except OSError as e:
            os.write(write_fd, json.dumps({"ok": False, "reason": "sandbox_unavailable",
                                           "message": f"could not confine the candidate: {e}"}).encode())
            os._exit(_FAILED_TO_CONFINE)
        answer = body(state)
        data = json.dumps(answer, default=str).encode()
    except BaseException as e:  # noqa: BLE001 - whatever happened, answer something
        data = json.dumps({"ok": False, "reason": "harness_error",
                           "message": f"{type(e).__name__}: {e}",
                           "traceback": traceback.format_exc()[-4000:]}).encode()
    view = memoryview(data)
    while view:
        n = os.write(write_fd, view)
        view = view[n:]
    os._exit(0)


def _middle(read_fd: int, write_fd: int, prepare: Callable[[], Any],
            body: Callable[[Any], dict[str, Any]], confinement: Confinement | None) -> None:
    """The forked child: namespaces, then the PID namespace's first process; never returns."""
    try:
        os.close(read_fd)
        namespaces.set_parent_death_signal(signal.SIGKILL)
        if confinement is not None:
            namespaces.enter()
        pid = os.fork()
        if pid == 0:
            _namespace_init(write_fd, prepare, body, confinement)
        os.close(write_fd)
        _wait_and_exit(pid)
    except BaseException as e:  # noqa: BLE001
        try:
            os.write(write_fd, json.dumps({"ok": False, "reason": "sandbox_unavailable",
                                           "message": f"could not isolate the candidate: {e}"}).encode())
        finally:
            os._exit(_FAILED_TO_CONFINE)


def _reap(pid: int, grace_s: float) -> int:
    """The child's wait status: after ``grace_s`` for it to exit with its grandchild's code,
    it is killed (and its PID namespace's first process with it, by the death signal)."""
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        time.sleep(0.005)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    return os.waitpid(pid, 0)[1]


def run_isolated(prepare: Callable[[], Any], body: Callable[[Any], dict[str, Any]],
                 confinement: Confinement | None, timeout_s: float) -> Outcome:
    """``body(prepare())`` in a fresh process; ``prepare`` runs there before confinement."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        _middle(read_fd, write_fd, prepare, body, confinement)
    os.close(write_fd)
    chunks: list[bytes] = []
    size, timed_out = 0, False
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            ready, _, _ = select.select([read_fd], [], [], min(remaining, 1.0))
            if not ready:
                continue
            chunk = os.read(read_fd, 1 << 20)
            if not chunk:
                break
            size += len(chunk)
            if size > MAX_ANSWER_BYTES:
                break
            chunks.append(chunk)
    finally:
        os.close(read_fd)
        status = _reap(pid, grace_s=0.0 if timed_out else 5.0)
    code = os.waitstatus_to_exitcode(status)
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
