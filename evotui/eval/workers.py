"""One worker subprocess: its private socket, a thread that drains and caps its output, and
the kill/restart logic the pool relies on (invariant 3)."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import evotui.eval.protocol as protocol
from evotui.eval.control import GATE_GRANTED, Done, Hello, Op, gate_mode, is_gate_ask
from evotui.eval.json_fields import MalformedMessage
from evotui.eval.sandbox.policy import scrubbed_environment

START_TIMEOUT_S = 180.0


class WorkerDied(Exception):
    pass


class WorkerTimeout(Exception):
    pass


def _repo_root() -> str:
    return str(Path(__file__).resolve().parents[2])


class WorkerProcess:
    """One worker subprocess, its private socket and a thread that drains its output."""

    def __init__(self, role: str, device: str, env: dict[str, str]) -> None:
        self.role, self.device, self.env = role, device, env
        self.proc: subprocess.Popen[bytes] | None = None
        self.conn: Connection | None = None
        self.output_bytes = 0
        self._tail = bytearray()
        self.restarts = 0
        self.hello = Hello(False)

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def start(self) -> None:
        parent_sock, child_sock = socket.socketpair()
        # a candidate worker starts with none of the user's variables: its forks run
        # candidates, and a process can read the environment it was started with
        base = scrubbed_environment(dict(os.environ)) if self.role == "candidate" else os.environ
        env = {**base, **self.env}
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [_repo_root(), env.get("PYTHONPATH")]))
        env["PYTHONUNBUFFERED"] = "1"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "evotui.eval.worker", "--role", self.role,
             "--fd", str(child_sock.fileno()), "--device", self.device],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            pass_fds=[child_sock.fileno()], env=env, start_new_session=True,
        )
        child_sock.close()
        self.conn = Connection(parent_sock.detach())
        self.output_bytes = 0
        threading.Thread(target=self._drain, args=(self.proc,), daemon=True).start()
        try:
            hello = self.hello = Hello.from_json(self._wait(START_TIMEOUT_S))
        except MalformedMessage as e:
            hello = Hello(False, error=str(e))
        if not hello.ready:
            self.kill()
            raise WorkerDied(f"{self.role} worker failed to start: {hello.error}\n{self.tail()}")

    def _drain(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        while chunk := proc.stdout.read1(65536):
            self.output_bytes += len(chunk)
            self._tail += chunk
            del self._tail[:-8192]

    @property
    def pid(self) -> int:
        """The running process's id; 0 when none runs."""
        return self.proc.pid if self.proc is not None and self.alive else 0

    def tail(self, n: int = 2000) -> str:
        return bytes(self._tail[-n:]).decode(errors="replace")

    def request(self, op: Op, timeout: float,
                on_gate: Callable[[str], None] | None = None) -> dict[str, Any]:
        """Send ``op`` and wait for the answer (the JSON object of the record the op returns).
        A candidate worker may ask for its device's gate on the way: ``on_gate(mode)`` blocks
        until it is held that way (not counted in ``timeout``)."""
        if not self.alive:
            self.restart()
        assert self.conn is not None
        self.output_bytes = 0
        try:
            protocol.send(self.conn, op.to_json())
        except OSError as e:
            raise WorkerDied(f"could not send to worker: {e}") from None
        return self._wait(timeout, on_gate)

    def _wait(self, timeout: float, on_gate: Callable[[str], None] | None = None) -> dict[str, Any]:
        assert self.conn is not None and self.proc is not None
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.kill()
                raise WorkerTimeout(f"no answer within {timeout:.0f} s")
            try:
                if self.conn.poll(min(remaining, 0.5)):
                    reply = protocol.recv(self.conn)
                    if not is_gate_ask(reply):
                        return reply
                    started = time.monotonic()
                    if on_gate is not None:
                        on_gate(gate_mode(reply))
                    deadline += time.monotonic() - started
                    protocol.send(self.conn, GATE_GRANTED)
                    continue
            except (EOFError, OSError, ValueError):
                pass
            else:
                if self.proc.poll() is None:
                    continue
            code = self.proc.wait(timeout=5)
            raise WorkerDied(_describe_exit(code))

    def abort(self) -> None:
        """Kill the process (and what it started) from another thread; the thread waiting
        in ``request`` sees it die and cleans up."""
        proc = self.proc
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait(timeout=10)
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def restart(self) -> None:
        self.kill()
        self.restarts += 1
        self.start()

    def stop(self) -> None:
        if self.alive and self.conn is not None:
            try:
                protocol.send(self.conn, Op("shutdown").to_json())
                self.proc.wait(timeout=5)  # type: ignore[union-attr]
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill()


def _describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"worker killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"worker killed by signal {-code}"
    return f"worker exited with status {code}"


def facts_of(answer: dict[str, Any]) -> dict[str, Any]:
    """The device facts of a judge's answer to ``facts`` (empty on the CPU or if malformed)."""
    try:
        return Done.from_json(answer).facts or {}
    except MalformedMessage:
        return {}
