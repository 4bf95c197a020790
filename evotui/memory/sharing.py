"""Sharing advice between libraries: the export format, and how an export (or a plain list
of advice) merges into a library. Same id or same normalised text: merged (counters,
provenance, status by the later decision); otherwise added with its id and provenance.
Importing twice adds nothing. The store does the locking and the writing
(``AdviceStore.export_data``, ``AdviceStore.import_data``)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from evotui.memory.errors import AdviceError
from evotui.memory.merge import merge
from evotui.memory.model import Advice, Provenance, is_valid_id, new_id, now_iso
from evotui.memory.records import MALFORMED

EXPORT_FORMAT = "evotui-advice"
FORMAT_VERSION = 1


@dataclass
class ImportResult:
    added: list[str] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)
    unchanged: int = 0


def export_doc(library_id: str, advices: Iterable[Advice]) -> dict[str, Any]:
    return {
        "format": EXPORT_FORMAT,
        "version": FORMAT_VERSION,
        "library": library_id,
        "exported": now_iso(),
        "advice": [a.to_doc() for a in advices],
    }


def read_import(data: Any) -> list[tuple[Advice, bool]]:
    """The advice in an export (or a plain list of advice objects or texts), each with
    whether it carried its own timestamps; AdviceError for a file that is not one."""
    items = data.get("advice") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise AdviceError("not an advice export: expected a list under 'advice'")
    return [_advice_from_import(item, i) for i, item in enumerate(items)]


def merge_import(by_id: dict[str, Advice], incoming: list[tuple[Advice, bool]],
                 norm: Callable[[str], str], taken: Callable[[str], bool]
                 ) -> tuple[dict[str, Advice], dict[str, Advice], ImportResult]:
    """``incoming`` (``read_import``) merged into the library's valid advice ``by_id``
    (updated in place): the records changed, those added, and the tally. ``norm`` normalises
    a text; ``taken`` tells an id some record (valid or damaged) has."""
    undated = {id(a) for a, stamped in incoming if not stamped}
    result = ImportResult()
    by_text = {norm(a.text): a.id for a in by_id.values()}
    changed: dict[str, Advice] = {}
    added: dict[str, Advice] = {}
    for adv, _ in incoming:
        target = adv.id if adv.id in by_id else by_text.get(norm(adv.text))
        if target is not None:
            local = by_id[target]
            if id(adv) in undated:  # a bare {"text": ...}: its "now" is not news
                adv = adv.with_(created=local.created, updated=local.updated,
                                decided=local.decided)
            merged = merge(local, adv)
            if merged is local:
                result.unchanged += 1
                continue
            by_id[target] = merged
            (added if target in added else changed)[target] = merged
            if target not in result.merged and target not in added:
                result.merged.append(target)
            continue
        while adv.id in by_id or taken(adv.id):
            adv = adv.with_(id=new_id())
        by_id[adv.id] = added[adv.id] = adv
        by_text[norm(adv.text)] = adv.id
        result.added.append(adv.id)
    return changed, added, result


def _advice_from_import(item: Any, index: int) -> tuple[Advice, bool]:
    """The advice in one imported item, and whether it carried its own timestamps."""
    if isinstance(item, str):
        item = {"text": item}
    if not isinstance(item, dict) or not str(item.get("text") or "").strip():
        raise AdviceError(f"advice #{index + 1} in the file has no text")
    doc = dict(item)
    if not is_valid_id(str(doc.get("id") or "")):
        doc["id"] = new_id()
    if not doc.get("provenance"):  # stable, so that importing the same file twice is a no-op
        doc["provenance"] = [Provenance(source="imported", date=str(doc.get("created") or "")).to_doc()]
    try:
        return Advice.from_doc(doc), bool(doc.get("created"))
    except MALFORMED as e:
        which = f" (id {item['id']})" if isinstance(item.get("id"), str) else ""
        raise AdviceError(f"advice #{index + 1}{which} in the file is not valid: {e}") from None
