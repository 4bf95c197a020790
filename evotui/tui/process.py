"""The engine in a child process (``evotui.tui.host``), seen from the UI: the default.

Why a process: a run of thousands of candidates makes the engine do O(n) work that holds
the GIL (a checkpoint of 5,000 candidates is ~190 ms of ``asdict`` and ~90 ms of
``json.dumps``, every generation) and fills the heap that each full garbage collection
walks. In the UI's process, on a thread or as a worker in the app's loop, either stalls the
UI's frames for that long. In a child process neither can touch the UI: events arrive as
JSON lines on a pipe, read by a thread of their own and handed to the subscribers (the
feed); commands and calls go the other way.

Blocking methods (``candidate``, ``export_best``, the advice ones) wait for the child's reply
and are called from worker threads, never on the UI's loop.

No Textual here.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import asdict
from pathlib import Path
from typing import Any

from evotui.core.advice_library import AdviceLibrary
from evotui.engine.events import Command, Event, Pause, Resume, Stop, event_from_dict
from evotui.engine.session import RunOptions, SetupError
from evotui.tui.controller import (
    CandidateInfo,
    Controller,
    NothingToExport,
    advice_summary,
    library_hook,
)
from evotui.tui.wire import command_to_dict

log = logging.getLogger(__name__)
CALL_TIMEOUT_S = 60.0
_ERRORS: dict[str, type[Exception]] = {"NothingToExport": NothingToExport, "KeyError": KeyError,
                                       "ValueError": ValueError}


class EngineProcess(Controller):
    def __init__(self, options: RunOptions | None = None, *, factory: str | None = None,
                 factory_kwargs: dict[str, Any] | None = None,
                 env: dict[str, str] | None = None) -> None:
        self.options = options or RunOptions()
        self.factory = factory
        self.factory_kwargs = factory_kwargs or {}
        self.env = env
        self.proc: subprocess.Popen[str] | None = None
        self.ready: dict[str, Any] = {}
        self.finished_info: dict[str, Any] | None = None
        self.setup_error: str | None = None
        self.exit_code: int | None = None
        self._paused = False
        self._stopping = False
        self._in_flight = 0
        self._subscribers: list[Callable[[Event], Any]] = []
        self._callbacks: list[Callable[[], None]] = []
        self._replies: dict[int, Future[Any]] = {}
        self._ids = itertools.count(1)
        self._write_lock = threading.Lock()
        self._ready = threading.Event()
        self._finished = threading.Event()
        self._exited = threading.Event()
        self._library: AdviceLibrary | None = None

    # ---- lifecycle ---------------------------------------------------------------------------
    def command_line(self) -> list[str]:
        cmd = [sys.executable, "-m", "evotui.tui.host"]
        if self.factory:
            return cmd + ["--factory", self.factory, "--factory-kwargs",
                          json.dumps(self.factory_kwargs)]
        return cmd + ["--options", json.dumps(asdict(self.options))]

    def start(self, *subscribers: Callable[[Event], Any], timeout: float | None = None) -> None:
        """Start the child and wait until its run is open; raises ``SetupError`` (one line
        for the user) when it cannot start."""
        self._subscribers.extend(subscribers)
        env = {**os.environ, **(self.env or {})}
        self.proc = subprocess.Popen(
            self.command_line(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
            encoding="utf-8", env=env, bufsize=1, start_new_session=True)
        threading.Thread(target=self._read, name="evotui-engine-reader", daemon=True).start()
        try:
            self._ready.wait(timeout)
        except BaseException:  # Ctrl-C while it sets up: take the child down with us
            self.proc.kill()
            raise
        if self.setup_error is not None:
            raise SetupError(self.setup_error)
        if not self.ready:
            raise SetupError(f"the engine process did not start (exit code {self.exit_code})")

    def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                msg = json.loads(line)
            except json.JSONDecodeError:
                log.warning("engine process: %s", line.rstrip())
                continue
            try:
                self._dispatch(msg)
            except Exception:
                log.exception("handling %s from the engine process failed", msg.get("kind"))
        self.exit_code = self.proc.wait()
        if self.setup_error is None and not self.ready:
            self.setup_error = f"the engine process exited during setup (code {self.exit_code})"
        for fut in list(self._replies.values()):
            if not fut.done():
                fut.set_exception(ConnectionError("the engine process has exited"))
        self._exited.set()
        self._ready.set()
        self._finish({"outcome": "failed", "message": "the engine process exited",
                      "error": f"the engine process exited unexpectedly (code {self.exit_code})"})

    def _dispatch(self, msg: dict[str, Any]) -> None:
        if "kind" in msg:
            try:
                event = event_from_dict(msg)
            except (KeyError, TypeError):  # an event this UI does not know
                return
            for fn in self._subscribers:
                fn(event)
            return
        what = msg.get("host")
        if what == "state":
            self._paused, self._stopping = bool(msg["paused"]), bool(msg["stopping"])
            self._in_flight = int(msg.get("in_flight") or 0)
        elif what == "reply":
            fut = self._replies.pop(msg.get("id"), None)
            if fut is not None:
                if msg.get("ok"):
                    fut.set_result(msg.get("value"))
                else:
                    cls = _ERRORS.get(msg.get("type", ""), RuntimeError)
                    fut.set_exception(cls(msg.get("error", "failed")))
        elif what == "ready":
            self.ready = msg
            self._ready.set()
        elif what == "setup_error":
            self.setup_error = msg.get("message", "setup failed")
            self._ready.set()
        elif what == "finished":
            self._finish(msg)

    def _finish(self, info: dict[str, Any]) -> None:
        if self._finished.is_set():
            return
        self.finished_info = info
        self._paused = self._stopping = False
        self._finished.set()
        for fn in list(self._callbacks):
            try:
                fn()
            except Exception:
                log.exception("finished callback failed")

    def add_finished_callback(self, fn: Callable[[], None]) -> None:
        self._callbacks.append(fn)
        if self._finished.is_set():
            fn()

    def close(self, timeout: float = 60.0) -> int | None:
        """Say bye (the child stops the run if it is still going and writes the report),
        wait for it to exit; kill it after ``timeout`` seconds."""
        if self.proc is None:
            return None
        self._write({"op": "bye"})
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        except OSError:
            pass
        if not self._exited.wait(timeout):
            self.proc.kill()
            self._exited.wait(10)
        return self.exit_code

    def join(self, timeout: float | None = None) -> bool:
        return self._finished.wait(timeout)

    # ---- state -------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return bool(self.ready) and not self._finished.is_set()

    @property
    def finished(self) -> bool:
        return self._finished.is_set()

    @property
    def paused(self) -> bool:
        return self._paused and self.running

    @property
    def stopping(self) -> bool:
        return self._stopping and self.running

    @property
    def in_flight(self) -> int:
        """Iterations the engine has started and not yet recorded (as of its last word)."""
        return self._in_flight if self.running else 0

    @property
    def run_dir(self) -> Path | None:
        return Path(self.ready["run_dir"]) if self.ready else None

    @property
    def notes(self) -> list[str]:
        return list(self.ready.get("notes") or [])

    @property
    def error(self) -> str | None:
        return (self.finished_info or {}).get("error")

    @property
    def outcome(self) -> str | None:
        return (self.finished_info or {}).get("outcome")

    # ---- commands ----------------------------------------------------------------------------
    def _write(self, msg: dict[str, Any]) -> bool:
        proc = self.proc
        if proc is None or proc.stdin is None or self._exited.is_set():
            return False
        with self._write_lock:
            try:
                proc.stdin.write(json.dumps(msg) + "\n")
                proc.stdin.flush()
            except (BrokenPipeError, OSError, ValueError):
                return False
        return True

    def send(self, command: Command) -> bool:
        if not self.running:
            return False
        if isinstance(command, Stop):
            self._stopping = True
        elif isinstance(command, Pause | Resume):
            self._paused = isinstance(command, Pause)  # the child confirms within 50 ms
        return self._write({"op": "command", "command": command_to_dict(command)})

    def toggle_pause(self) -> bool | None:
        if not self.running:
            return None
        pausing = not self._paused
        self.send(Pause() if pausing else Resume())
        return pausing

    def stop(self, grace_s: float = 5.0) -> bool:
        return self.send(Stop(grace_s))

    # ---- calls (blocking: from worker threads) -----------------------------------------------
    def call(self, fn: str, *args: Any, timeout: float = CALL_TIMEOUT_S, **kwargs: Any) -> Any:
        rid = next(self._ids)
        fut: Future[Any] = Future()
        self._replies[rid] = fut
        if not self._write({"op": "call", "id": rid, "fn": fn, "args": list(args),
                            "kwargs": kwargs}):
            self._replies.pop(rid, None)
            raise ConnectionError("the engine process has exited")
        return fut.result(timeout)

    def candidate(self, cid: str) -> CandidateInfo | None:
        data = self.call("candidate", cid)
        return CandidateInfo.from_dict(data) if data else None

    def export_best(self) -> tuple[str, Path]:
        value = self.call("export_best")
        return value["id"], Path(value["path"])

    def advice_defaults(self) -> dict[str, str]:
        return dict(self.ready.get("advice_defaults") or {})

    def _advice(self, fn: str, direct: Callable[[AdviceLibrary], Any], *args: Any,
                **kwargs: Any) -> dict[str, Any]:
        """``fn`` in the child; ``direct`` on the library itself when the child is gone."""
        try:
            return dict(self.call(fn, *args, **kwargs))
        except ConnectionError:  # the child is gone: straight to the library
            if self._library is None:
                self._library = library_hook()
            return advice_summary(direct(self._library))

    def accept_advice(self, advice_id: str) -> dict[str, Any]:
        return self._advice("accept_advice", lambda lib: lib.accept(advice_id), advice_id)

    def veto_advice(self, advice_id: str) -> dict[str, Any]:
        return self._advice("veto_advice", lambda lib: lib.veto(advice_id), advice_id)

    def author_advice(self, text: str, **fields: Any) -> dict[str, Any]:
        return self._advice("author_advice", lambda lib: lib.author(text, **fields), text,
                            **fields)
