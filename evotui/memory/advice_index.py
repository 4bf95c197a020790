"""The retrieval index over one generation of the advice library: per-document arrays
(kind, arch, dtype, status, utility from the win rate, embedding vectors) and BM25 postings,
with which advice a query may be shown and its kind/arch/dtype boost. Rebuilt by the
retriever (retrieve.Retriever) only as far as the library changed."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

import numpy as np

from evotui.memory.bm25 import BM25
from evotui.memory.model import PRIOR_LOSSES, PRIOR_WINS
from evotui.memory.query import DTYPES, Query, kinds_compatible, normalize_dtype
from evotui.memory.suggest import has_hints
from evotui.memory.text import normalize_arch, tokenize

STATUS_BOOST = {"accepted": 1.5, "authored": 1.5, "proposed": 1.0}


def doc_tokens(doc: dict[str, Any]) -> Counter[str]:
    tags = " ".join(doc.get("tags") or ())
    return Counter(tokenize(doc["text"]) + tokenize(tags) * 2 + tokenize(doc.get("kind") or ""))


def doc_embed_text(doc: dict[str, Any]) -> str:
    tags = ", ".join(doc.get("tags") or ())
    return f"{doc['text']} (tags: {tags})" if tags else doc["text"]


def _doc_dtypes(doc: dict[str, Any]) -> frozenset[str]:
    cond = doc.get("conditions") or {}
    listed = cond.get("dtypes") or cond.get("dtype") or ()
    if isinstance(listed, str):
        listed = [listed]
    found = {normalize_dtype(d) for d in listed}
    found |= {t for t in doc.get("tags") or () if t in DTYPES}
    return frozenset(d for d in found if d)


def _doc_archs(doc: dict[str, Any]) -> frozenset[str] | None:
    """None: fits every arch."""
    cond = doc.get("conditions") or {}
    archs = {normalize_arch(a) for a in cond.get("archs") or ()}
    own = normalize_arch(doc.get("arch"))
    if own:
        archs.add(own)
    archs.discard(None)
    return frozenset(a for a in archs if a) or None


def static_key(doc: dict[str, Any]) -> tuple:
    """What changes whenever a document's content does (not its counters)."""
    return (doc.get("id"), doc.get("updated"), doc.get("text"))


def changed_positions(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[int] | None:
    """Positions whose document object changed, or None when the list itself changed.

    The store writes copy-on-write and a re-read reuses the objects of unchanged lines, so
    an unchanged document is the very same object from one generation to the next.
    """
    if len(old) != len(new):
        return None
    return [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a is not b]


class AdviceIndex:
    """Arrays over one generation of the library.

    Everything but the counters depends only on each document's content, whose changes bump
    its ``updated`` stamp (counters do not). When only counters changed since the previous
    generation (``record_outcome``), the previous index is reused and only the changed
    documents' counters are read again, so retrieval right after an outcome stays cheap.
    """

    def __init__(self, docs: list[dict[str, Any]], bm25: BM25, previous: AdviceIndex | None = None,
                 changed: list[int] | None = None) -> None:
        self.docs = docs
        self.bm25 = bm25
        n = len(docs)
        if previous is not None and changed is not None:
            for name in ("static_version", "kind_set", "kind_ids", "arch_set", "arch_ids",
                         "dtype_set", "dtype_ids", "vetoed", "tunable", "static_utility", "vectors",
                         "has_vector", "vectors_version", "_masks"):
                setattr(self, name, getattr(previous, name))
            shown, wins = previous.shown.copy(), previous.wins.copy()
            positions: Iterable[int] = changed
        else:
            self._build_static(docs, previous)
            shown = np.zeros(n, dtype=np.float32)
            wins = np.zeros(n, dtype=np.float32)
            positions = range(n)
        for i in positions:
            counters = docs[i].get("counters")
            shown[i] = wins[i] = 0.0
            if counters:
                for s_, w_ in counters.values():
                    shown[i] += s_
                    wins[i] += w_
        self.shown, self.wins = shown, wins
        prior_mean = PRIOR_WINS / (PRIOR_WINS + PRIOR_LOSSES)
        rate = (wins + PRIOR_WINS) / (shown + PRIOR_WINS + PRIOR_LOSSES)
        self.utility = (self.static_utility * np.clip(0.5 + 0.5 * rate / prior_mean, 0.5, 2.0)
                        ).astype(np.float32)

    def _build_static(self, docs: list[dict[str, Any]], previous: AdviceIndex | None) -> None:
        n = len(docs)
        self.static_version = (previous.static_version + 1) if previous is not None else 0
        kinds = [str(d.get("kind") or "general") for d in docs]
        self.kind_set = sorted(set(kinds))
        kind_id = {k: i for i, k in enumerate(self.kind_set)}
        self.kind_ids = np.fromiter((kind_id[k] for k in kinds), dtype=np.int32, count=n)
        archs = [_doc_archs(d) for d in docs]
        self.arch_set = sorted(set(archs), key=lambda s: sorted(s) if s else [])
        arch_id = {a: i for i, a in enumerate(self.arch_set)}
        self.arch_ids = np.fromiter((arch_id[a] for a in archs), dtype=np.int32, count=n)
        dts = [_doc_dtypes(d) for d in docs]
        self.dtype_set = sorted(set(dts), key=sorted)
        dt_id = {a: i for i, a in enumerate(self.dtype_set)}
        self.dtype_ids = np.fromiter((dt_id[a] for a in dts), dtype=np.int32, count=n)
        status = [d.get("status", "proposed") for d in docs]
        self.vetoed = np.fromiter((s == "vetoed" for s in status), dtype=bool, count=n)
        self.tunable = np.fromiter((has_hints(d) for d in docs), dtype=bool, count=n)
        boost = np.fromiter((STATUS_BOOST.get(s, 1.0) for s in status), dtype=np.float32,
                            count=n)
        gains = np.fromiter((max(0.0, min(float(d.get("gain") or 0.0), 0.5)) for d in docs),
                            dtype=np.float32, count=n)
        self.static_utility = (boost * (1.0 + 0.5 * gains)).astype(np.float32)
        self.vectors: np.ndarray | None = None
        self.has_vector = np.zeros(n, dtype=bool)
        self.vectors_version = -1
        self._masks: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}

    def base_mask_and_boost(self, q: Query) -> tuple[np.ndarray, np.ndarray]:
        """Which advice may be shown for this query, and its kind/arch/dtype boost."""
        key = (q.kind, q.arch, q.dtype)
        cached = self._masks.get(key)
        if cached is not None:
            return cached
        ok_kinds = [i for i, k in enumerate(self.kind_set) if kinds_compatible(k, q.kind)]
        exact_kind = [i for i, k in enumerate(self.kind_set) if k == q.kind and k != "general"]
        ok_arch = [i for i, a in enumerate(self.arch_set) if a is None or q.arch is None or q.arch in a]
        same_arch = [i for i, a in enumerate(self.arch_set) if a is not None and q.arch in a]
        mask = np.isin(self.kind_ids, ok_kinds) & np.isin(self.arch_ids, ok_arch) & ~self.vetoed
        boost = np.where(np.isin(self.kind_ids, exact_kind), 1.15, 1.0).astype(np.float32)
        boost *= np.where(np.isin(self.arch_ids, same_arch), 1.1, 1.0).astype(np.float32)
        if q.dtype:
            match = [i for i, d in enumerate(self.dtype_set) if q.dtype in d]
            miss = [i for i, d in enumerate(self.dtype_set) if d and q.dtype not in d]
            boost *= np.where(np.isin(self.dtype_ids, match), 1.1, 1.0).astype(np.float32)
            boost *= np.where(np.isin(self.dtype_ids, miss), 0.85, 1.0).astype(np.float32)
        self._masks[key] = (mask, boost)
        return mask, boost
