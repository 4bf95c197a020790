"""The advice library on disk: TinyDB + a crash-proof storage + a file lock.

Every read-modify-write holds ``FileLock(advice.json.lock)`` and re-reads the file inside
the lock (the storage notices other writers by a generation token), so the TUI, the CLI
and several runs — also on a shared team disk — can write at once without losing updates.
Writes are atomic (temp file, fsync, ``os.replace``, fsync of the folder): a method that
returned has its change on disk. Plain reads take no lock: the file is always complete.

An empty library is filled with the cold-start pack the first time it is opened.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout
from tinydb import TinyDB
from tinydb.table import Document, Table

from evotui.memory.atomic import AtomicJSONStorage, CorruptLibrary, remove_stale_temps
from evotui.memory.errors import (
    AdviceError,
    AmbiguousId,
    DamagedAdvice,
    LibraryLocked,
    UnknownAdvice,
)
from evotui.memory.merge import merge
from evotui.memory.model import STATUSES, Advice, Provenance, is_valid_id, new_id, now_iso
from evotui.memory.records import MALFORMED, TABLE, AdviceTable, Snapshot, damage
from evotui.memory.sharing import (
    FORMAT_VERSION,
    ImportResult,
    export_doc,
    merge_import,
    read_import,
)
from evotui.memory.text import normalize_text

__all__ = [
    "AdviceStore", "AdviceError", "UnknownAdvice", "AmbiguousId", "CorruptLibrary",
    "DamagedAdvice", "LibraryLocked", "ImportResult", "Snapshot",
]


class AdviceStore:
    """The advice library. Thread-safe within a process, process-safe through a file lock."""

    def __init__(
        self,
        path: str | Path | None = None,
        *,
        cold_start: bool = True,
        lock_timeout: float = 60.0,
    ) -> None:
        if path is None:
            from evotui.config import advice_db_path

            path = advice_db_path()
        self.path = Path(path)
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        self.lock_timeout = lock_timeout
        self._storage: AtomicJSONStorage | None = None
        self._db = TinyDB(str(self.path), storage=self._make_storage)
        self._table: Table = AdviceTable(self.storage, TABLE, cache_size=0)
        self._lock = FileLock(str(self.lock_path), timeout=lock_timeout, poll_interval=0.005)
        self._mutex = threading.RLock()
        self._norm_memo: dict[str, str] = {}
        self._text_index: dict[str, str] | None = None  # normalised text → id, per generation
        self._text_gen: str | None = None
        # id(doc) → (doc, why it is damaged or None): documents are copy-on-write, so an
        # unchanged one keeps its object and is checked once, not on every snapshot
        self._checked: dict[int, tuple[dict[str, Any], str | None]] = {}
        self._damaged: list[tuple[str, str]] = []
        self._open(cold_start)

    def _make_storage(self, path: str) -> AtomicJSONStorage:
        self._storage = AtomicJSONStorage(path)
        return self._storage

    @property
    def storage(self) -> AtomicJSONStorage:
        assert self._storage is not None
        return self._storage

    # -- opening ---------------------------------------------------------------------------------
    def _open(self, cold_start: bool) -> None:
        self.storage.read()  # a damaged file raises CorruptLibrary here, before any write
        leftovers = any(self.path.parent.glob(f".{self.path.name}.*.tmp"))
        if self.storage.meta.get("library") and self.path.exists() and not leftovers:
            return
        try:
            with self._locked():
                remove_stale_temps(self.path)  # a writer killed mid-write left it
                data = self.storage.read()
                if self.storage.meta.get("library") and data is not None:
                    return
                fresh = data is None
                self.storage.meta.update(library=uuid.uuid4().hex[:12], version=FORMAT_VERSION)
                if fresh and cold_start:
                    from evotui.memory.coldstart import load_pack

                    pack = load_pack()
                    data = {TABLE: {a.id: a.to_doc() for a in pack}}
                    self.storage.meta["seeded"] = now_iso()
                self.storage.write(data or {})
        except OSError:
            if not self.path.exists():
                raise  # a read-only folder with no library: nothing to show

    @contextmanager
    def _locked(self) -> Iterator[None]:
        with self._mutex:
            try:
                self._lock.acquire()
            except Timeout:
                raise LibraryLocked(
                    f"the advice library is locked by another process for over "
                    f"{self.lock_timeout:.0f} s (lock file {self.lock_path})"
                ) from None
            try:
                yield
            finally:
                self._lock.release()

    def locked(self) -> AbstractContextManager[None]:
        """Hold the library's lock across several calls (re-entrant): read, decide, write."""
        return self._locked()

    def close(self) -> None:
        self._db.close()

    # -- reading ---------------------------------------------------------------------------------
    @property
    def library_id(self) -> str:
        self.storage.read()
        return str(self.storage.meta.get("library") or "local")

    def snapshot(self) -> Snapshot:
        """The valid documents; damaged ones (see ``damaged()``) stay on disk, left out."""
        with self._mutex:
            data = self.storage.read() or {}
            return Snapshot(self.storage.gen, self._sort_out(data.get(TABLE, {})))

    def damaged(self) -> list[tuple[str, str]]:
        """(id, what is wrong) of each record that is not valid advice (a hand edit)."""
        with self._mutex:
            self.snapshot()
            return list(self._damaged)

    def _sort_out(self, table: dict[str, Any]) -> list[dict[str, Any]]:
        good: list[dict[str, Any]] = []
        damaged: list[tuple[str, str]] = []
        checked: dict[int, tuple[dict[str, Any], str | None]] = {}
        for key, doc in table.items():
            hit = self._checked.get(id(doc))
            why = hit[1] if hit is not None and hit[0] is doc else damage(doc)
            checked[id(doc)] = (doc, why)
            if why is None:
                good.append(doc)
            else:
                damaged.append((str(key), why))
        self._checked, self._damaged = checked, damaged
        return good

    def all(self) -> list[Advice]:
        docs = self.snapshot().docs
        return sorted((Advice.from_doc(d) for d in docs), key=lambda a: (a.created, a.id))

    def __len__(self) -> int:
        return len(self.snapshot().docs)

    def __contains__(self, advice_id: object) -> bool:
        return isinstance(advice_id, str) and self._get(advice_id) is not None

    def _get(self, advice_id: str) -> Advice | None:
        """The valid advice with this id (None also for a damaged record)."""
        if not is_valid_id(advice_id):
            return None
        with self._mutex:
            doc = self._table.get(doc_id=advice_id)  # type: ignore[arg-type]
        try:
            return Advice.from_doc(dict(doc)) if isinstance(doc, dict) else None
        except MALFORMED:
            return None

    def get(self, advice_id: str) -> Advice:
        """The advice with this id, or with this unique id prefix (at least 3 characters)."""
        found = self._get(advice_id)
        if found is not None:
            return found
        self._raise_if_damaged(advice_id)
        found = self._get(self.resolve(advice_id))
        if found is None:
            raise UnknownAdvice(f"no advice with id {advice_id!r}")
        return found

    def resolve(self, prefix: str) -> str:
        prefix = prefix.strip().lower()
        if is_valid_id(prefix) and self._get(prefix) is not None:
            return prefix
        hits = [d["id"] for d in self.snapshot().docs if len(prefix) >= 3 and d["id"].startswith(prefix)]
        if not hits:
            raise UnknownAdvice(f"no advice with id {prefix!r}")
        if len(hits) > 1:
            raise AmbiguousId(f"id prefix {prefix!r} matches {len(hits)} pieces of advice: "
                              + ", ".join(sorted(hits)[:5]))
        return hits[0]

    def _taken(self, advice_id: str) -> bool:
        """Some record, valid or damaged, has this id."""
        with self._mutex:
            return self._table.get(doc_id=advice_id) is not None  # type: ignore[arg-type]

    def _raise_if_damaged(self, advice_id: str) -> None:
        key = advice_id.strip().lower()
        hits = [(i, why) for i, why in self.damaged() if i == key or (len(key) >= 3
                                                                       and i.startswith(key))]
        if len(hits) == 1:
            bad, why = hits[0]
            raise DamagedAdvice(f"advice {bad} in {self.path} is damaged ({why}): fix it there, "
                                f"or remove it with `evotui advice rm {bad}`", bad)

    def _norm(self, text: str) -> str:
        norm = self._norm_memo.get(text)
        if norm is None:
            if len(self._norm_memo) > 50_000:
                self._norm_memo.clear()
            norm = self._norm_memo[text] = normalize_text(text)
        return norm

    def find_text(self, text: str) -> Advice | None:
        """The advice whose normalised text equals ``text``'s, if any."""
        snap = self.snapshot()
        if self._text_index is None or self._text_gen != snap.gen:
            self._text_index = {self._norm(d["text"]): d["id"] for d in snap.docs}
            self._text_gen = snap.gen
        found = self._text_index.get(self._norm(text))
        return self._get(found) if found else None

    # -- writing ---------------------------------------------------------------------------------
    # Writes are copy-on-write: a changed document is a new dict in the table, never the old
    # one changed in place, so readers holding a snapshot (retrieval in another thread) see
    # consistent documents without taking the lock.
    def _put(self, advices: Iterable[Advice]) -> None:
        docs = {a.id: a.to_doc() for a in advices}
        if docs:
            self._table._update_table(lambda table: table.update(docs))

    def _write_doc(self, advice: Advice) -> None:
        self._put([advice])

    def add(self, advice: Advice) -> Advice:
        """Store ``advice``; returns what is stored. The same text (normalised) is merged into
        the existing record instead of repeated — the returned id is then the existing one."""
        with self._locked():
            existing = self.find_text(advice.text)
            if existing is not None:
                merged = merge(existing, advice)
                if merged is not existing:
                    self._write_doc(merged)
                return merged
            while self._taken(advice.id) or not is_valid_id(advice.id):
                advice = advice.with_(id=new_id())
            self._table.insert(Document(advice.to_doc(), doc_id=advice.id))  # type: ignore[arg-type]
            if self._text_index is not None:
                self._text_index[self._norm(advice.text)] = advice.id
                self._text_gen = self.storage.gen
            return advice

    def new(
        self,
        text: str,
        *,
        kind: str = "general",
        tags: Iterable[str] = (),
        arch: str | None = None,
        status: str = "authored",
        source: str = "authored",
        **fields: Any,
    ) -> Advice:
        """Create and store a new piece of advice (an authored one by default)."""
        from evotui.memory.text import normalize_arch, normalize_tags

        text = " ".join(text.split())
        if not text:
            raise AdviceError("advice text is empty")
        advice = Advice(
            id=new_id(), text=text, kind=kind or "general", tags=tuple(normalize_tags(list(tags))),
            arch=normalize_arch(arch), status=status,
            provenance=fields.pop("provenance", (Provenance(source=source),)), **fields,
        )
        return self.add(advice)

    def update(self, advice_id: str, **changes: Any) -> Advice:
        """Change fields of one piece of advice (text, kind, tags, arch, conditions, gain...)."""
        if "status" in changes:
            return self.set_status(advice_id, changes.pop("status"), **changes)
        with self._locked():
            current = self.get(advice_id)
            new = current.with_(**changes)
            if new.to_doc() == current.to_doc():
                return current
            new = new.with_(updated=now_iso())
            self._write_doc(new)
            return new

    def set_status(self, advice_id: str, status: str, **changes: Any) -> Advice:
        if status not in STATUSES:
            raise AdviceError(f"unknown status {status!r}; expected one of {', '.join(STATUSES)}")
        with self._locked():
            current = self.get(advice_id)
            stamp = now_iso()
            new = current.with_(status=status, decided=stamp, updated=stamp, **changes)
            self._write_doc(new)
            return new

    def accept(self, advice_id: str) -> Advice:
        return self.set_status(advice_id, "accepted")

    def veto(self, advice_id: str) -> Advice:
        return self.set_status(advice_id, "vetoed")

    def remove(self, advice_id: str) -> Advice | None:
        """Removes it and returns it; None when it was a damaged record (removed all the same)."""
        with self._locked():
            try:
                current = self.get(advice_id)
            except DamagedAdvice as e:
                self._table.remove(doc_ids=[e.advice_id])  # type: ignore[list-item]
                return None
            self._table.remove(doc_ids=[current.id])  # type: ignore[list-item]
            return current

    def record_outcome(self, advice_ids: Iterable[str], improved: bool) -> None:
        """One showing of each piece of advice; ``improved``: the child beat its parent.
        Ids no longer in the library are skipped. Does not change ``updated``."""
        ids = sorted({a for a in advice_ids if is_valid_id(a)})
        if not ids:
            return
        with self._locked():
            lib = self.library_id
            present = [a for a in ids if self._get(a) is not None]
            if not present:
                return

            def bump(table: dict[str, dict]) -> None:
                for key in present:
                    doc = dict(table[key])
                    counters = dict(doc.get("counters") or {})
                    shown, wins = counters.get(lib, [0, 0])
                    counters[lib] = [int(shown) + 1, int(wins) + (1 if improved else 0)]
                    doc["counters"] = counters
                    table[key] = doc

            self._table._update_table(bump)

    def merge_into(self, keep_id: str, drop_id: str) -> Advice:
        """Fold ``drop`` into ``keep`` (provenance, counters added, tags) and remove ``drop``."""
        with self._locked():
            keep, drop = self.get(keep_id), self.get(drop_id)
            if keep.id == drop.id:
                raise AdviceError("cannot merge a piece of advice into itself")
            merged = merge(keep, drop, counters="sum").with_(updated=now_iso())
            self._write_doc(merged)
            self._table.remove(doc_ids=[drop.id])  # type: ignore[list-item]
            return merged

    def replace(self, advice: Advice) -> Advice:
        """Write ``advice`` over the record with the same id (which must exist)."""
        with self._locked():
            self.get(advice.id)
            self._write_doc(advice)
            return advice

    # -- sharing ---------------------------------------------------------------------------------
    def export_data(self) -> dict[str, Any]:
        return export_doc(self.library_id, self.all())

    def import_data(self, data: Any) -> ImportResult:
        """Merge an export (or a plain list of advice objects) into this library
        (``sharing.merge_import``). Importing twice adds nothing."""
        incoming = read_import(data)
        with self._locked():
            by_id = {d["id"]: Advice.from_doc(d) for d in self.snapshot().docs}
            changed, added, result = merge_import(by_id, incoming, self._norm, self._taken)
            self._put(changed.values())
            if added:
                self._table.insert_multiple(
                    [Document(a.to_doc(), doc_id=a.id) for a in added.values()]  # type: ignore[arg-type]
                )
        return result
