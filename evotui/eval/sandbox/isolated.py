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
import socket
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import evotui.eval.outbox as outbox
import evotui.eval.sandbox.landlock as landlock
import evotui.eval.sandbox.namespaces as namespaces
import evotui.eval.sandbox.seccomp as seccomp
from evotui.eval.sandbox.policy import Confinement

MAX_ANSWER_BYTES = 64 * 1024 * 1024
_FAILED_TO_CONFINE = 71


@dataclass(frozen=True)
class Outcome:
    answer: dict[str, Any] | None  # None: no (readable) answer came back
    exit_status: int | None  # as os.waitstatus_to_exitcode gives it
    timed_out: bool = False
    error: str = ""
    # the sealed memfds it handed over (evotui.eval.outbox), open in this process: the
    # caller closes them when the judge has read them
    blobs: outbox.Received | None = None


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


def _close_fds_except(*keep: int) -> None:
    """Every inherited descriptor but stdio and ``keep`` (the worker's socket to the pool too)."""
    low = 3
    for fd in sorted(keep):
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, os.sysconf("SC_OPEN_MAX"))


def _send(write_fd: int, answer: dict[str, Any]) -> None:
    view = memoryview(json.dumps(answer, default=str).encode())
    while view:
        view = view[os.write(write_fd, view):]


def _candidate(write_fd: int, blob_fd: int, state: Any, body: Callable[[Any], dict[str, Any]],
               confinement: Confinement | None) -> None:
    """The candidate's side of the request; never returns."""
    try:
        namespaces.set_parent_death_signal(signal.SIGKILL)
        _close_fds_except(write_fd, blob_fd)
        outbox.open_channel(blob_fd)
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


def _leader(read_fd: int, write_fd: int, blob_fd: int, prepare: Callable[[], Any],
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
            _candidate(write_fd, blob_fd, state, body, confinement)
        os.close(write_fd)
        os.close(blob_fd)
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
                 confinement: Confinement | None, timeout_s: float,
                 blob_limit_bytes: int = 64 << 30,
                 gate: Callable[[str], None] | None = None) -> Outcome:
    """``body(prepare())`` in a fresh process; ``prepare`` runs there before confinement
    (single-threaded: a process with threads cannot enter a user namespace). What the body
    hands over through ``evotui.eval.outbox`` comes back in ``Outcome.blobs``; ``gate`` answers
    its ``ask_gate(mode)`` (the time it waits there does not count against ``timeout_s``)."""
    read_fd, write_fd = os.pipe()
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    pid = os.fork()
    if pid == 0:
        ours.close()
        _leader(read_fd, write_fd, theirs.detach(), prepare, body, confinement)
    os.close(write_fd)
    theirs.close()
    blobs = outbox.Received([])
    try:
        answer = _collect(pid, read_fd, ours, blobs, timeout_s, blob_limit_bytes, gate)
    except BaseException:
        blobs.close()
        raise
    finally:
        ours.close()
    return Outcome(answer.answer, answer.exit_status, answer.timed_out, answer.error, blobs)


def _collect(pid: int, read_fd: int, blob_sock: socket.socket, blobs: outbox.Received,
             timeout_s: float, blob_limit_bytes: int,
             gate: Callable[[str], None] | None) -> Outcome:
    """The answer on ``read_fd`` and the blobs on ``blob_sock``, as they come."""
    try:
        os.setpgid(pid, pid)  # also here: killpg must find the group even if the child is slow
    except OSError:
        pass
    chunks: list[bytes] = []
    size, timed_out, blob_open = 0, False, True
    deadline = time.monotonic() + timeout_s
    try:
        while size <= MAX_ANSWER_BYTES:
            remaining = deadline + blobs.waited_s - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            watched = [read_fd, blob_sock] if blob_open else [read_fd]
            ready, _, _ = select.select(watched, [], [], min(remaining, 1.0))
            if blob_sock in ready:
                blob_open = outbox.receive(blob_sock, blobs, blob_limit_bytes, gate)
            if read_fd in ready:
                chunk = os.read(read_fd, 1 << 20)
                if not chunk:
                    break
                size += len(chunk)
                chunks.append(chunk)
        # handed over before the answer was written: all queued by now
        blob_sock.setblocking(False)
        while blob_open and not _drained(blob_sock):
            blob_open = outbox.receive(blob_sock, blobs, blob_limit_bytes)
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


def _drained(sock: socket.socket) -> bool:
    ready, _, _ = select.select([sock], [], [], 0)
    return not ready
