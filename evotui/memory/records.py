"""Advice documents as the library stores them: the TinyDB table keyed by the advice ids
themselves, and which documents are damaged (a hand edit that is no valid advice)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tinydb.table import Table

from evotui.memory.atomic import AtomicJSONStorage
from evotui.memory.model import Advice

TABLE = "advice"
# what reading a malformed document raises
MALFORMED = (ValueError, TypeError, KeyError, AttributeError, IndexError)


@dataclass(frozen=True)
class Snapshot:
    """The raw documents of one generation of the library (read-only by contract)."""

    gen: str | None
    docs: list[dict[str, Any]]


class AdviceTable(Table):
    """Document ids are the advice ids themselves ("a1b2c3d4"): no int round trip."""

    document_id_class = str  # type: ignore[assignment]

    def _get_next_id(self):  # type: ignore[override]
        raise TypeError("advice documents are always inserted with their own id")

    def _update_table(self, updater: Callable[[dict], None]) -> None:
        """TinyDB's version copies the whole table twice to convert int ids; ours are the
        stored string keys already, so the table dict is updated as it is."""
        storage = self._storage
        tables = storage.read() or {}
        table = tables.setdefault(self.name, {})
        try:
            updater(table)
        except BaseException:
            if isinstance(storage, AtomicJSONStorage):
                storage.invalidate()  # the updater may have changed the cache half-way
            raise
        storage.write(tables)
        self.clear_cache()


def damage(doc: Any) -> str | None:
    """Why ``doc`` is not a valid advice record, or None."""
    try:
        Advice.from_doc(doc)
    except MALFORMED as e:
        return str(e) or type(e).__name__
    return None
