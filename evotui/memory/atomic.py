"""A TinyDB storage that a crash cannot corrupt, and that notices other writers.

TinyDB's ``JSONStorage`` rewrites its file in place: a crash (or ``kill -9``) mid-write
leaves half a file. ``AtomicJSONStorage`` writes a temporary file in the same folder,
flushes and fsyncs it, ``os.replace``s it over the library and fsyncs the folder, so the
file on disk is always either the old library or the new one, complete.

Reads are cached: the file starts with a generation token (``{"_meta":{"gen":...``) that
changes on every write; the cache is used only while the file's inode, size, mtime and
token are unchanged, so a write by another process (the TUI, the CLI, another run) is
always seen. Locking is the caller's job (``AdviceStore`` holds a ``FileLock`` around every
read-modify-write). A file that is not valid JSON raises ``CorruptLibrary`` after a copy of
it is kept next to it (``advice.json.corrupt-<timestamp>``): never silent loss.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import time
from pathlib import Path
from typing import Any

from tinydb.storages import Storage

META = "_meta"
_HEAD_BYTES = 96


class CorruptLibrary(Exception):
    """The advice file exists but cannot be read as an advice library."""


def fsync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):  # some filesystems (and Windows) cannot fsync a folder
        fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` so that a crash leaves either the old or the new file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(3)}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    fsync_dir(path.parent)


def remove_stale_temps(path: Path) -> int:
    """Delete temporary files left by killed writers. Call only while holding the lock."""
    n = 0
    for p in path.parent.glob(f".{path.name}.*.tmp"):
        with contextlib.suppress(OSError):
            p.unlink()
            n += 1
    return n


def _signature(st: os.stat_result) -> tuple[int, int, int]:
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def _read_gen(head: bytes) -> str | None:
    marker = b'"gen":"'
    i = head.find(marker)
    if i < 0:
        return None
    j = head.find(b'"', i + len(marker))
    return head[i + len(marker) : j].decode("ascii", "replace") if j > 0 else None


def _dumps(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


class _NotOurLayout(Exception):
    pass


class AtomicJSONStorage(Storage):
    """TinyDB storage: JSON, one document per line, atomic replace + fsync, cached.

    The file is plain JSON (``json.load`` reads it) laid out one document per line::

        {"_meta":{"gen":"9f2c...","library":"...","version":1}
        ,"advice":{
        "a1b2c3d4":{"id":"a1b2c3d4","text":"...",...}
        ,"c0ffee12":{...}
        }
        }

    so that a write re-serialises only the documents that changed and a read after another
    process's write parses only the lines that changed. Callers that change a document in
    place (TinyDB's ``update``) must name it in ``touch()`` before the write.
    """

    def __init__(self, path: str | os.PathLike[str], **_: Any) -> None:
        super().__init__()
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._data: dict[str, Any] | None = None
        self._sig: tuple[int, int, int] | None = None
        # per table: key → (the document object, its serialised line)
        self._frag: dict[str, dict[str, tuple[dict, bytes]]] = {}
        self._touched: set[str] = set()
        self.meta: dict[str, Any] = {}
        self.gen: str | None = None

    # -- TinyDB's interface ---------------------------------------------------------------------
    def read(self) -> dict[str, Any] | None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            self.invalidate()
            self.meta, self.gen = {}, None
            return None
        except OSError as e:
            raise CorruptLibrary(f"cannot read the advice library {self.path}: {e.strerror}") from e
        sig = _signature(st)
        if self._data is not None and sig == self._sig and self._head_gen() == self.gen:
            return self._data
        try:
            raw = self.path.read_bytes()
        except OSError as e:
            raise CorruptLibrary(f"cannot read the advice library {self.path}: {e.strerror}") from e
        try:
            meta, data = self._parse_lines(raw)
        except _NotOurLayout:
            meta, data = self._parse_whole(raw)
        self.meta, self.gen = meta, meta.get("gen")
        self._data, self._sig = data, sig
        return data

    def write(self, data: dict[str, Any]) -> None:
        try:
            # the token goes first so that a 96-byte read finds it
            meta = {"gen": secrets.token_hex(8), **{k: v for k, v in self.meta.items() if k != "gen"}}
            touched = self._touched
            frag: dict[str, dict[str, tuple[dict, bytes]]] = {}
            out = [b'{"' + META.encode() + b'":' + _dumps(meta)]
            for name, table in data.items():
                if name == META:
                    continue
                old = self._frag.get(name, {})
                new: dict[str, tuple[dict, bytes]] = {}
                lines: list[bytes] = []
                for key, doc in table.items():
                    cached = old.get(key)
                    if cached is None or cached[0] is not doc or key in touched:
                        cached = (doc, _dumps(str(key)) + b":" + _dumps(doc))
                    new[key] = cached
                    lines.append(cached[1])
                out.append(b"," + _dumps(str(name)) + b":{")
                if lines:
                    out.append(b"\n,".join(lines))  # one document per line, comma first
                out.append(b"}")
                frag[name] = new
            out.append(b"}")
            atomic_write_bytes(self.path, b"\n".join(out))
            self.meta, self.gen = meta, meta["gen"]
            self._data, self._sig = data, _signature(os.stat(self.path))
            self._frag = frag
            touched.clear()
        except BaseException:
            self.invalidate()  # TinyDB changed our cached dict in place
            raise

    def close(self) -> None:
        self.invalidate()

    # -- helpers --------------------------------------------------------------------------------
    def touch(self, keys: Any) -> None:
        """Documents with these keys were changed in place: serialise them again."""
        self._touched.update(str(k) for k in keys)

    def invalidate(self) -> None:
        self._data = self._sig = None
        self._frag = {}
        self._touched.clear()

    def _head_gen(self) -> str | None:
        try:
            with open(self.path, "rb") as f:
                return _read_gen(f.read(_HEAD_BYTES))
        except OSError:
            return None

    def _parse_lines(self, raw: bytes) -> tuple[dict[str, Any], dict[str, Any]]:
        """Fast path for files in our layout: only lines not seen before are parsed."""
        lines = raw.split(b"\n")
        head = b'{"' + META.encode() + b'":'
        if len(lines) < 2 or not lines[0].startswith(head) or lines[-1] != b"}":
            raise _NotOurLayout
        try:
            meta = json.loads(lines[0][len(head):])
            data: dict[str, Any] = {}
            known = {
                line: (key, doc)
                for tfrag in self._frag.values()
                for key, (doc, line) in tfrag.items()
            }
            frag: dict[str, dict[str, tuple[dict, bytes]]] = {}
            table: dict[str, Any] | None = None
            tfrag: dict[str, tuple[dict, bytes]] = {}
            for line in lines[1:-1]:
                if table is None:
                    if not (line.startswith(b',"') and line.endswith(b":{")):
                        raise _NotOurLayout
                    name = json.loads(line[1:-2])
                    if name in data:
                        raise _NotOurLayout
                    table, tfrag = data.setdefault(name, {}), frag.setdefault(name, {})
                    continue
                if line == b"}":
                    table = None
                    continue
                if line[:1] == b",":
                    line = line[1:]
                hit = known.get(line)
                if hit is None:
                    one = json.loads(b"{" + line + b"}")
                    if len(one) != 1:
                        raise _NotOurLayout
                    hit = next(iter(one.items()))
                    if not isinstance(hit[1], dict):
                        raise _NotOurLayout
                key, doc = hit
                if key in table:
                    raise _NotOurLayout
                table[key] = doc
                tfrag[key] = (doc, line)
        except (ValueError, UnicodeDecodeError):
            raise _NotOurLayout from None
        if table is not None or not isinstance(meta, dict):
            raise _NotOurLayout
        self._frag = frag
        return meta, data

    def _parse_whole(self, raw: bytes) -> tuple[dict[str, Any], dict[str, Any]]:
        self._frag = {}
        if not raw.strip():
            return {}, {}  # an empty file holds nothing that could be lost
        try:
            data = json.loads(raw)
            if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
                raise ValueError("the top level is not an object of tables")
        except (ValueError, UnicodeDecodeError) as e:
            backup = self._keep_backup(raw)
            raise CorruptLibrary(
                f"the advice library {self.path} is damaged ({e}); a copy was kept at "
                f"{backup}. Repair it and run `evotui advice import {backup}`, or move "
                f"{self.path.name} away to start a new library."
            ) from e
        meta = data.pop(META, None) or {}
        return dict(meta), data
    def _keep_backup(self, raw: bytes) -> Path:
        """Keep one copy per distinct damaged content (reopening does not pile up copies)."""
        for old in sorted(self.path.parent.glob(f"{self.path.name}.corrupt-*")):
            with contextlib.suppress(OSError):
                if old.stat().st_size == len(raw) and old.read_bytes() == raw:
                    return old
        stamp = time.strftime("%Y%m%d-%H%M%S")
        backup = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
        n = 1
        while backup.exists():
            backup = self.path.with_name(f"{self.path.name}.corrupt-{stamp}-{n}")
            n += 1
        shutil.copy2(self.path, backup)
        fsync_dir(self.path.parent)
        return backup
