"""The pipe between the TUI and its engine process (``evotui.tui.host``): JSON lines, one
message each (the messages are listed in ``evotui.tui.host``). Both sides use this module;
no Textual here.

An engine event is encoded once in the child: the line that goes down the pipe is the one
``events.jsonl`` gets (``tee_events``); a resumed run's past events are sent as the lines
they already are (``past_events``).
"""

from __future__ import annotations

import dataclasses
import json
import queue
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from evotui.engine import events as ev
from evotui.engine.rundir import RunDir

COMMAND_TYPES: dict[str, type[ev.Command]] = {
    cls.kind: cls for cls in (ev.Pause, ev.Resume, ev.Stop, ev.Hint, ev.PinParent,
                              ev.AcceptAdvice, ev.VetoAdvice, ev.AuthorAdvice)}


REPLAYED = {"candidate_proposed", "candidate_evaluated", "advice_retrieved", "generation_done"}


def past_events(path: Path) -> list[str]:
    """The lines of ``events.jsonl`` from a resumed run's earlier sessions that rebuild its
    table and curve (sent as they are): candidates that were evaluated (the ones in flight at
    the checkpoint are redone), their advice, generations. Notices and earlier starts and
    ends are left out."""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []
    events: list[tuple[dict[str, Any], str]] = []
    for line in lines:
        try:
            data = json.loads(line)
        except ValueError:
            continue  # a line cut short by a crash
        if isinstance(data, dict) and data.get("kind") in REPLAYED:
            events.append((data, line))
    done = {e.get("id") for e, _ in events if e["kind"] == "candidate_evaluated"}
    return [line for e, line in events
            if e["kind"] in ("candidate_evaluated", "generation_done")
            or e.get("id", e.get("candidate_id")) in done]


class _Encoded:
    """An event already encoded: ``RunDir.log`` writes its line as it is."""

    __slots__ = ("line",)

    def __init__(self, line: str) -> None:
        self.line = line

    def to_json(self) -> str:
        return self.line


def tee_events(run_dir: RunDir, send: Callable[[str], None]) -> None:
    """Encode every event once, for the pipe and for ``events.jsonl`` both: the engine hands
    each event to ``run_dir.log`` (on its loop, in order), which from now on sends the line
    to the UI and logs that same line. Model chunks go to the UI only, as before."""
    log_line = run_dir.log

    def log(event: ev.Event) -> None:
        line = event.to_json()
        send(line)
        if not isinstance(event, ev.LLMChunk):
            log_line(_Encoded(line))  # type: ignore[arg-type]

    run_dir.log = log  # type: ignore[method-assign]


def command_to_dict(cmd: ev.Command) -> dict[str, Any]:
    return {"kind": cmd.kind, **dataclasses.asdict(cmd)}


def command_from_dict(data: dict[str, Any]) -> ev.Command:
    cls = COMMAND_TYPES[data["kind"]]
    known = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: v for k, v in data.items() if k in known})


class Writer:
    """One thread writes every line, so the engine's loop never waits on the pipe."""

    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.q: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._run, name="evotui-host-writer", daemon=True)
        self.thread.start()

    def put(self, obj: dict[str, Any]) -> None:
        self.q.put(json.dumps(obj, default=str, separators=(",", ":")))

    def line(self, line: str) -> None:
        """A line already encoded (an event)."""
        self.q.put(line)

    def _run(self) -> None:
        while (line := self.q.get()) is not None:
            try:
                self.out.write(line + "\n")
                self.out.flush()
            except (BrokenPipeError, OSError, ValueError):
                return

    def close(self) -> None:
        self.q.put(None)
        self.thread.join(10)
