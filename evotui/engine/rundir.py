"""A run directory: what a run leaves on disk and what ``--resume`` reads back.

- ``events.jsonl``: one JSON event per line, flushed as written (LLM chunks are left out);
- ``checkpoint.json``: population, counters, RNG state and config, written atomically
  (temp file, fsync, ``os.replace``, fsync of the folder) every generation; candidates'
  programs are not in it but in
- ``sources.jsonl``: each candidate's program, appended once (a program never changes) and
  synced before the checkpoint that refers to it, so a checkpoint stays small however long
  the run (5,000 candidates: 23 MB and 0.4 s per checkpoint before, see tests);
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
import threading
from pathlib import Path
from typing import IO, Any

from evotui.engine.events import Event, LLMChunk

CHECKPOINT = "checkpoint.json"
EVENTS = "events.jsonl"
SOURCES = "sources.jsonl"
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
    try:
        _check_outline(data)
        _fill_sources(path, data)
        _check_shape(data)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
        raise RunDirError(f"{file} is damaged ({_why(e)})") from None
    return data


def _check_outline(data: dict[str, Any]) -> None:
    population = data.get("population")
    if not isinstance(population, dict):
        raise ValueError("no 'population' object" if population is None
                         else "'population' is not an object")
    candidates = population.get("candidates")
    if not isinstance(candidates, list) or not all(isinstance(c, dict) for c in candidates):
        raise ValueError("'population.candidates' is not a list of objects")
    if not isinstance(data.get("rng"), list) or len(data["rng"]) != 3:
        raise ValueError("'rng' is not a random generator state")


def _fill_sources(path: Path, data: dict[str, Any]) -> None:
    if data.get("sources") != SOURCES:  # older checkpoints hold the programs themselves
        return
    sources = read_sources(path / SOURCES, data.get("sources_offset"))
    for c in data["population"]["candidates"]:
        if c.get("source") is None:
            if c["id"] not in sources:
                raise RunDirError(f"{path / SOURCES} lacks the program of {c['id']}: the "
                                  "run directory is damaged")
            c["source"] = sources[c["id"]]


def _check_shape(data: dict[str, Any]) -> None:
    """Parse what a resume will read, so that a hand-edited or truncated-by-hand checkpoint
    fails here, with its name, rather than deep in the engine."""
    from evotui.engine.mutators import LLMAccount
    from evotui.engine.state import EngineConfig, RunState

    if not isinstance(data.get("task", ""), str):
        raise TypeError("'task' is not a path")
    for key in ("run", "config", "mutator"):
        if not isinstance(data.get(key) or {}, dict):
            raise TypeError(f"{key!r} is not an object")
    mutator = data.get("mutator") or {}
    LLMAccount.from_dict(mutator.get("account") or {})
    int((mutator.get("state") or {}).get("patch_failures", 0))
    int(data.get("events_offset", 0))
    if data.get("sources_offset") is not None:
        int(data["sources_offset"])
    RunState.from_dict(data, EngineConfig.from_dict(data.get("config") or {}))


def _why(e: Exception) -> str:
    if isinstance(e, KeyError):
        return f"{e.args[0]!r} is missing"
    return str(e) or type(e).__name__


def read_sources(file: Path, limit: int | None = None) -> dict[str, str]:
    """id → program (from the first ``limit`` bytes); a last line cut short by a crash is
    ignored (its checkpoint never came)."""
    out: dict[str, str] = {}
    try:
        raw = file.read_bytes()
        lines = raw[: int(limit) if limit is not None else len(raw)].decode(
            "utf-8", errors="replace").splitlines()
    except FileNotFoundError:
        return out
    except OSError as e:
        raise RunDirError(f"cannot read {file}: {e}") from None
    for line in lines:
        try:
            item = json.loads(line)
            out[item["id"]] = item["source"]
        except (ValueError, KeyError, TypeError):
            continue
    return out


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
        self._sources_written = set(read_sources(self.path / SOURCES)) if resume else set()
        self._sources: IO[str] | None = None
        self._write_lock = threading.Lock()  # a worker thread's and the final write may overlap
        self._last_seq = 0

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
        ``events_offset()``) and the programs it refers to reach the disk first. Takes the
        programs out of ``data``'s candidates. Thread-safe: of two overlapping writes the one
        with the higher ``data['seq']`` is kept."""
        with self._write_lock:
            seq = int(data.get("seq") or 0)
            if seq and seq <= self._last_seq:
                return  # an older snapshot that lost the race: the newer one is on disk
            population = data.get("population") or {}
            for c in population.get("candidates", ()):
                if c["id"] not in self._sources_written:
                    self._append_source(c["id"], c["source"])
                c["source"] = None
            offset = 0
            if self._sources is not None:
                self._sources.flush()
                os.fsync(self._sources.fileno())
                offset = self._sources.tell()
            elif (self.path / SOURCES).exists():
                offset = (self.path / SOURCES).stat().st_size
            os.fsync(self._events_fd)
            atomic_write(self.path / CHECKPOINT, json.dumps(
                {"version": CHECKPOINT_VERSION, **data, "sources": SOURCES,
                 "sources_offset": offset}))
            self._last_seq = max(self._last_seq, seq)

    def truncate_sources(self, offset: int | None) -> None:
        """On resume: drop programs appended after the checkpoint (a checkpoint that never
        got written leaves them; their ids will be handed out again to new programs)."""
        file = self.path / SOURCES
        if offset is not None and file.exists() and file.stat().st_size > int(offset):
            os.truncate(file, int(offset))
        self._sources_written = set(read_sources(file))

    def _append_source(self, cid: str, source: str) -> None:
        if self._sources is None:
            file = self.path / SOURCES
            if file.exists():  # a line cut short by a crash must not swallow the next one
                with open(file, "rb+") as f:
                    raw = f.read()
                    f.truncate(raw.rfind(b"\n") + 1)
            self._sources = open(file, "a", encoding="utf-8")  # noqa: SIM115
        self._sources.write(json.dumps({"id": cid, "source": source}) + "\n")
        self._sources_written.add(cid)

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
        with self._write_lock:  # a cancelled checkpoint thread may still be writing
            if self._sources is not None:
                self._sources.close()
                self._sources = None
        if not self._events.closed:
            self.sync_events()
            self._events.close()
        if self._lock is not None:
            fcntl.flock(self._lock, fcntl.LOCK_UN)
            self._lock.close()
            self._lock = None
