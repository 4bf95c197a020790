"""A run directory: what a run leaves on disk and what ``--resume`` reads back.

- ``events.jsonl``: one JSON event per line, flushed as written (LLM chunks are left out);
- ``checkpoint.json``: population, counters, RNG state and config, written atomically
  (temp file, fsync, ``os.replace``, fsync of the folder) every generation;
- ``report.json``, ``report.md``, ``best.py``: written at the end (and on Ctrl-C);
- ``llm/<id>.md``: the prompt and raw answer behind each LLM mutation.

The checkpoint records how long ``events.jsonl`` was when it was taken; resuming truncates the
log there, so the log and the population always tell the same story. A lock file keeps two
processes from writing the same run.
"""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
from pathlib import Path
from typing import IO, Any

from evotui.engine.events import Event, LLMChunk

CHECKPOINT = "checkpoint.json"
EVENTS = "events.jsonl"
CHECKPOINT_VERSION = 1


class RunDirError(Exception):
    """A user-facing problem with a run directory (one line, exit code 2)."""


def atomic_write(path: Path, text: str) -> None:
    """Write ``text`` so that ``path`` holds either the old or the new content, never a mix."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def load_checkpoint(path: Path) -> dict[str, Any]:
    file = path / CHECKPOINT
    if not file.is_file():
        raise RunDirError(f"nothing to resume in {path}: no {CHECKPOINT} (was the run started "
                          "with --out there, and did it evaluate its seed?)")
    try:
        data = json.loads(file.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise RunDirError(f"cannot read {file}: {e}") from None
    if not isinstance(data, dict) or data.get("version") != CHECKPOINT_VERSION:
        raise RunDirError(f"{file} is not an evotui checkpoint of version {CHECKPOINT_VERSION}")
    return data


class RunDir:
    def __init__(self, path: Path, *, resume: bool = False) -> None:
        self.path = Path(path)
        if not resume and (self.path / CHECKPOINT).exists():
            raise RunDirError(f"{self.path} already holds a run: continue it with --resume "
                              f"{self.path}, or choose another --out")
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise RunDirError(f"cannot create run directory {self.path}: {e.strerror}") from None
        self._lock: IO[str] | None = open(self.path / ".lock", "w")  # noqa: SIM115
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._lock.close()
            self._lock = None
            raise RunDirError(f"{self.path} is in use by another evotui process") from None
        self._events: IO[str] = open(self.path / EVENTS, "a", encoding="utf-8")  # noqa: SIM115
        self._events_fd = self._events.fileno()

    # ---- events --------------------------------------------------------------------------
    def log(self, event: Event) -> None:
        if isinstance(event, LLMChunk) or self._events.closed:
            return
        self._events.write(event.to_json() + "\n")
        self._events.flush()

    def events_offset(self) -> int:
        self._events.flush()
        return self._events.tell()

    def truncate_events(self, offset: int) -> None:
        """Drop events logged after a checkpoint (they describe work the resume redoes)."""
        self._events.flush()
        size = self._events.tell()
        if 0 <= offset < size:
            self._events.truncate(offset)
            self._events.seek(offset)

    def sync_events(self) -> None:
        if not self._events.closed:
            self._events.flush()
            os.fsync(self._events.fileno())

    # ---- files ---------------------------------------------------------------------------
    def write_checkpoint(self, data: dict[str, Any]) -> None:
        """Atomic; the events logged up to ``data['events_offset']`` (flushed by
        ``events_offset()``) reach the disk first. Safe to call from a worker thread."""
        os.fsync(self._events_fd)
        atomic_write(self.path / CHECKPOINT, json.dumps({"version": CHECKPOINT_VERSION, **data}))

    def write_report(self, report: dict[str, Any], markdown: str) -> None:
        atomic_write(self.path / "report.json", json.dumps(report, indent=2) + "\n")
        atomic_write(self.path / "report.md", markdown)

    def write_best(self, source: str) -> None:
        atomic_write(self.path / "best.py", source)

    def write_llm_log(self, candidate_id: str, prompt: list[dict[str, str]], reply: str) -> None:
        folder = self.path / "llm"
        folder.mkdir(exist_ok=True)
        parts = [f"## {m.get('role', '?')}\n\n{m.get('content', '')}" for m in prompt]
        parts.append(f"## reply\n\n{reply}")
        (folder / f"{candidate_id}.md").write_text("\n\n".join(parts) + "\n")

    def close(self) -> None:
        if not self._events.closed:
            self.sync_events()
            self._events.close()
        if self._lock is not None:
            fcntl.flock(self._lock, fcntl.LOCK_UN)
            self._lock.close()
            self._lock = None
