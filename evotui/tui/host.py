"""The engine's host process for the TUI: ``python -m evotui.tui.host``.

The TUI runs the engine in this child process so that nothing the engine does (its
checkpoints walk every candidate, its garbage, its CPU) can stall the UI's event loop: they
share neither a GIL nor a garbage collector. They talk in JSON lines:

child → UI (stdout; everything else the child prints goes to stderr, then ``engine.log``):
    {"kind": ..., ...}                            an engine event: the very line that
                                                  ``events.jsonl`` gets (encoded once)
    {"host": "ready", "run_dir", "notes", "advice_defaults", "backend"}
    {"host": "setup_error", "message"}            the run could not start (exit code 2)
    {"host": "state", "paused", "stopping", "in_flight"}   whenever one changes
    {"host": "reply", "id", "ok", "value" | "error", "type"}
    {"host": "finished", "outcome", "message", "error", "summary"}   the run is over
UI → child (stdin):
    {"op": "command", "command": {"kind": "pause", ...}}     into the engine's inbox
    {"op": "call", "id", "fn", "args", "kwargs"}   candidate, export_best, accept_advice,
                                                   veto_advice, author_advice
    {"op": "bye"} or end of input: stop the run if it is still going (in-flight evaluations
                                   get a few seconds), write the report, exit.

The child stays up after the run ends, serving calls (export, details, advice) until the UI
says bye. The session comes from ``open_session(RunOptions(**options))`` (``--options``), the
factory every face uses; ``--factory module:function`` builds it from ``--factory-kwargs``
instead (tests and benchmarks use stand-ins this way).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import importlib
import json
import logging
import os
import signal
import sys
import threading
import traceback
from pathlib import Path
from typing import Any

from evotui.core.advice_library import AdviceLibrary
from evotui.engine import events as ev
from evotui.engine.rundir import EVENTS
from evotui.engine.session import (
    STOP_GRACE_S,
    RunOptions,
    Session,
    SessionFactory,
    SetupError,
    open_session,
    summary_lines,
)
from evotui.tui.controller import (
    NothingToExport,
    advice_defaults,
    advice_hook,
    advice_summary,
    best_program,
    candidate_info,
    library_hook,
)
from evotui.tui.wire import Writer, command_from_dict, past_events, tee_events

log = logging.getLogger(__name__)
STATE_POLL_S = 0.05
NICE = 10  # EVOTUI_ENGINE_NICE: how much the engine yields the CPU to the UI (0: not at all)


class Host:
    def __init__(self, setup: SessionFactory, writer: Writer) -> None:
        self.setup = setup
        self.w = writer
        self.session: Session | None = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self.run_task: asyncio.Task[Any] | None = None
        self.bye = asyncio.Event()
        self.stopping = False
        self._state: tuple[bool, bool, int] | None = None
        self._library: AdviceLibrary | None = None

    async def main(self) -> int:
        self.loop = asyncio.get_running_loop()
        try:
            self.session = await self.setup()
        except SetupError as e:
            self.w.put({"host": "setup_error", "message": str(e)})
            return 2
        except Exception as e:
            log.exception("setup failed")
            self.w.put({"host": "setup_error", "message": f"{type(e).__name__}: {e}"})
            return 1
        session = self.session
        engine = session.engine
        _log_to(session.run_dir.path / "engine.log")
        await _yield_cpu(session)
        self.w.put({"host": "ready", "run_dir": str(session.run_dir.path),
                    "notes": list(session.notes), "advice_defaults": advice_defaults(engine),
                    "backend": _backend_name(session)})
        if engine.resumed:  # the table and the curve start with what the run did before
            for past in past_events(session.run_dir.path / EVENTS):
                self.w.line(past)
        tee_events(session.run_dir, self.w.line)
        threading.Thread(target=self._read_stdin, name="evotui-host-reader", daemon=True).start()
        poll = asyncio.create_task(self._poll_state())
        error = None
        self.run_task = asyncio.create_task(engine.run())
        try:
            result = await self.run_task
            outcome, message, report = result.outcome, result.message, result.report
        except BaseException:  # noqa: BLE001 - the UI shows it; the process carries on serving
            error = traceback.format_exc(limit=8)
            log.error("engine failed:\n%s", error)
            outcome, message, report = "failed", "engine error", None
        try:
            await session.aclose()
        except Exception:
            log.exception("closing the session failed")
        summary = summary_lines(outcome, message, report) if report is not None else []
        self._emit_state(force=True)
        self.w.put({"host": "finished", "outcome": outcome, "message": message, "error": error,
                    "summary": summary})
        await self.bye.wait()
        poll.cancel()
        return 1 if outcome == "failed" else 0

    # ---- state --------------------------------------------------------------------------------
    def _emit_state(self, force: bool = False) -> None:
        engine = self.session.engine if self.session else None
        running = self.run_task is not None and not self.run_task.done()
        state = (bool(engine is not None and running and engine.paused),
                 self.stopping and running,
                 int(engine.in_flight) if engine is not None and running else 0)
        if force or state != self._state:
            self._state = state
            self.w.put({"host": "state", "paused": state[0], "stopping": state[1],
                        "in_flight": state[2]})

    async def _poll_state(self) -> None:
        while True:
            self._emit_state()
            await asyncio.sleep(STATE_POLL_S)

    # ---- input --------------------------------------------------------------------------------
    def _read_stdin(self) -> None:
        assert self.loop is not None
        for line in sys.stdin:
            try:
                msg = json.loads(line)
            except json.JSONDecodeError:
                continue
            self.loop.call_soon_threadsafe(self._handle, msg)
            if msg.get("op") == "bye":
                return
        self.loop.call_soon_threadsafe(self._handle, {"op": "bye"})

    def _handle(self, msg: dict[str, Any]) -> None:
        op = msg.get("op")
        if op == "command":
            self._command(command_from_dict(msg["command"]))
        elif op == "call":
            asyncio.get_running_loop().create_task(self._call(msg))
        elif op == "bye":
            asyncio.get_running_loop().create_task(self._bye())

    def _command(self, cmd: ev.Command) -> None:
        if self.run_task is None or self.run_task.done() or self.session is None:
            return
        if isinstance(cmd, ev.Stop):
            self.stopping = True
        self.session.engine.send(cmd)

    async def _bye(self) -> None:
        if self.run_task is not None and not self.run_task.done():
            self._command(ev.Stop(STOP_GRACE_S))
            await asyncio.wait({self.run_task})
        self.bye.set()

    async def _call(self, msg: dict[str, Any]) -> None:
        reply: dict[str, Any] = {"host": "reply", "id": msg.get("id")}
        try:
            fn = getattr(self, f"call_{msg['fn']}")
            value = await fn(*msg.get("args", ()), **msg.get("kwargs", {}))
            reply.update(ok=True, value=value)
        except Exception as e:
            if not isinstance(e, NothingToExport | KeyError | ValueError):
                log.exception("call %s failed", msg.get("fn"))
            reply.update(ok=False, error=str(e), type=type(e).__name__)
        self.w.put(reply)

    # ---- calls (on the engine's loop) ---------------------------------------------------------
    async def call_candidate(self, cid: str) -> dict[str, Any] | None:
        assert self.session is not None
        info = candidate_info(self.session.engine, cid)
        return info.to_dict() if info is not None else None

    async def call_export_best(self) -> dict[str, Any]:
        assert self.session is not None
        best_id, text = best_program(self.session.engine)
        await asyncio.to_thread(self.session.run_dir.write_best, text)
        return {"id": best_id, "path": str(self.session.run_dir.path / "best.py")}

    def _memory(self) -> AdviceLibrary:
        """The engine's library when it takes decisions, else the one at EVOTUI_HOME."""
        hook = advice_hook(self.session.engine if self.session else None)
        if hook is None:
            if self._library is None:
                self._library = library_hook()
            hook = self._library
        return hook

    async def call_accept_advice(self, advice_id: str) -> dict[str, Any]:
        return advice_summary(await asyncio.to_thread(self._memory().accept, advice_id))

    async def call_veto_advice(self, advice_id: str) -> dict[str, Any]:
        return advice_summary(await asyncio.to_thread(self._memory().veto, advice_id))

    async def call_author_advice(self, text: str, **fields: Any) -> dict[str, Any]:
        return advice_summary(await asyncio.to_thread(self._memory().author, text, **fields))


def _log_to(path: Any) -> None:
    """Route this process's stderr (and logging) to ``engine.log`` in the run directory."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    except OSError:
        return
    sys.stderr.flush()
    os.dup2(fd, 2)
    os.dup2(fd, 1)
    os.close(fd)


def _backend_name(session: Session) -> str:
    """The kernel dialect of the run (its seed's), for the status line."""
    try:
        from evotui.dialects import backend_for_source

        opts = session.options
        seed = opts.seed or session.engine.task.seed_path
        return str(backend_for_source(Path(seed).read_text()).name) if seed else "triton"
    except Exception:
        return "triton"


async def _yield_cpu(session: Session) -> None:
    """Lower this process's CPU priority so that, on a busy machine, the UI's frames come
    first (the engine's bookkeeping grows with the population: a checkpoint of 5,000
    candidates is ~0.3 s of CPU). The evaluator's workers are started first, at the normal
    priority: a worker restarted later (after a crash) inherits the lower one."""
    nice = int(os.environ.get("EVOTUI_ENGINE_NICE", NICE))
    if nice <= 0:
        return
    try:
        await asyncio.to_thread(session.evaluator.start)
    except Exception as e:
        log.warning("starting the evaluator's workers failed: %s", e)
    try:
        tids = [int(t) for t in os.listdir("/proc/self/task")]  # every thread (Linux)
    except OSError:
        tids = [0]
    for tid in tids:
        try:
            os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid)
                                                     + nice))
        except OSError:
            pass


def _factory(spec: str, kwargs: dict[str, Any]) -> SessionFactory:
    module, _, name = spec.partition(":")
    fn = getattr(importlib.import_module(module), name)
    return lambda: fn(**kwargs)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m evotui.tui.host")
    ap.add_argument("--options", default="{}", help="RunOptions as JSON")
    ap.add_argument("--factory", default=None, help="module:function building the session")
    ap.add_argument("--factory-kwargs", default="{}")
    args = ap.parse_args(argv)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the UI decides when to stop
    proto = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # a stray print must not corrupt the protocol
    sys.stdout = sys.stderr
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("evotui").setLevel(logging.INFO)
    if args.factory:  # a stand-in session (tests, benchmarks)
        setup = _factory(args.factory, json.loads(args.factory_kwargs))
    else:  # the run's own, from the factory every face opens its session with
        setup = functools.partial(open_session, RunOptions(**json.loads(args.options)))

    writer = Writer(proto)
    try:
        code = asyncio.run(Host(setup, writer).main())
    finally:
        writer.close()
    return code


if __name__ == "__main__":
    sys.exit(main())
