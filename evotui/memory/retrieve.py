"""Top-K advice for a task: hybrid BM25 (+ embeddings), filtered, boosted, diverse.

1. Candidates: every piece of advice except vetoed ones, whose kind fits the task's
   (same kind, same family such as row reductions, or ``general``) and whose arch fits
   (no arch, or the task's; ``conditions["archs"]`` widens it).
2. Relevance: BM25 over text + tags + kind for a weighted query (task kind > tags and the
   reference's ops > name and dtype > identifiers from the parent code), normalised
   to the best candidate; when an embedding model is there, averaged with the cosine
   similarity (min–max normalised). Candidates with no lexical match are kept only when
   embeddings say they are close.
3. Utility: × 1.5 for accepted or authored advice, × the win rate (shown → child improved,
   with a Beta(1, 4) prior) relative to the prior mean, × a small bonus for measured gain,
   for the exact kind, for the same arch and for the same dtype (a dtype mismatch costs).
4. Diversity: a candidate too similar to one already picked (token Jaccard ≥ 0.6) is skipped.

The index is rebuilt only when the library changes (BM25 postings only when texts, tags or
kinds change; statuses and counters are cheap arrays). ``search`` does no network I/O:
query vectors come from the embedder's cache (fill it with ``MemoryHook.warm``).
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass
from typing import Any

import numpy as np

from evotui.memory.advice_index import (
    AdviceIndex,
    changed_positions,
    doc_embed_text,
    doc_tokens,
    static_key,
)
from evotui.memory.bm25 import BM25
from evotui.memory.embed import Embedder
from evotui.memory.model import Advice
from evotui.memory.query import DTYPES, Query, kinds_compatible, normalize_dtype
from evotui.memory.store import AdviceStore
from evotui.memory.text import content_words, jaccard

MAX_K = 5


@dataclass(frozen=True)
class Hit:
    advice: Advice
    score: float
    lexical: float
    semantic: float | None


class Retriever:
    """Ranks the library for a query. Cheap to call repeatedly: the index is cached."""

    def __init__(self, store: AdviceStore, embedder: Embedder | None = None,
                 diversity: float = 0.6) -> None:
        self.store = store
        self.embedder = embedder
        self.diversity = diversity
        self._index: AdviceIndex | None = None
        self._gen: object = object()
        self._tokens: dict[tuple, Counter[str]] = {}
        self._lock = threading.RLock()  # the engine calls from worker threads
        self._missing: tuple[int, int, list[str]] | None = None

    # -- index -----------------------------------------------------------------------------------
    def index(self) -> AdviceIndex:
        with self._lock:
            return self._refresh()

    def _refresh(self) -> AdviceIndex:
        snap = self.store.snapshot()
        if self._index is not None and snap.gen == self._gen:
            return self._index
        docs = snap.docs
        old = self._index
        changed = changed_positions(old.docs, docs) if old is not None else None
        if old is not None and changed is not None and all(
            static_key(old.docs[i]) == static_key(docs[i]) for i in changed
        ):
            idx = AdviceIndex(docs, old.bm25, old, changed)  # only counters changed
        else:
            memo = self._tokens
            bags = []
            live = set()
            for d in docs:
                tkey = (d["text"], d.get("kind"), tuple(d.get("tags") or ()))
                live.add(tkey)
                bag = memo.get(tkey)
                if bag is None:
                    bag = memo[tkey] = doc_tokens(d)
                bags.append(bag)
            if len(memo) > 2 * len(docs) + 1000:
                self._tokens = {k: v for k, v in memo.items() if k in live}
            idx = AdviceIndex(docs, BM25(bags), old)
        self._index, self._gen = idx, snap.gen
        return idx

    def _vectors(self, idx: AdviceIndex) -> np.ndarray | None:
        with self._lock:
            return self._align_vectors(idx)

    def _align_vectors(self, idx: AdviceIndex) -> np.ndarray | None:
        emb = self.embedder
        if emb is None or not idx.docs:
            return None
        if idx.vectors is None or idx.vectors_version != emb.version:
            vecs = emb.cached([doc_embed_text(d) for d in idx.docs])
            dim = next((v.shape[0] for v in vecs if v is not None), 0)
            if dim == 0:
                idx.vectors, idx.vectors_version = None, emb.version
                return None
            mat = np.zeros((len(vecs), dim), dtype=np.float32)
            has = np.zeros(len(vecs), dtype=bool)
            for i, v in enumerate(vecs):
                if v is not None and v.shape[0] == dim:
                    mat[i], has[i] = v, True
            idx.vectors, idx.has_vector, idx.vectors_version = mat, has, emb.version
        return idx.vectors

    def missing_vectors(self) -> list[str]:
        """Texts of advice (not vetoed) with no cached vector yet, for ``MemoryHook.warm``.
        Cached until the library's texts or the vector cache change."""
        emb = self.embedder
        if emb is None:
            return []
        with self._lock:
            idx = self.index()
            memo = self._missing
            if memo is not None and memo[:2] == (idx.static_version, emb.version):
                return memo[2]
            texts = [doc_embed_text(d) for d in idx.docs if d.get("status") != "vetoed"]
            missing = [t for t, v in zip(texts, emb.cached(texts), strict=True) if v is None]
            self._missing = (idx.static_version, emb.version, missing)
            return missing

    # -- search ----------------------------------------------------------------------------------
    def search(self, query: Query, k: int = 3, tunable_only: bool = False) -> list[Hit]:
        """Top-``k`` hits; ``tunable_only``: only advice that suggests tunable moves (what
        the parameter mutator can follow, ``evotui.memory.suggest``)."""
        k = max(0, min(int(k), MAX_K))
        if k == 0:
            return []
        idx = self.index()
        if not idx.docs:
            return []
        mask, boost = idx.base_mask_and_boost(query)
        if tunable_only:
            mask = mask & idx.tunable
        lexical = idx.bm25.scores(query.terms())
        lex_max = float(lexical[mask].max()) if mask.any() else 0.0
        lex = lexical / lex_max if lex_max > 0 else np.zeros_like(lexical)
        relevance = lex
        semantic: np.ndarray | None = None
        vectors = self._vectors(idx)
        if vectors is not None and self.embedder is not None:
            qv = self.embedder.cached([query.embed_text()])[0]
            if qv is not None and qv.shape[0] == vectors.shape[1]:
                cos = vectors @ qv
                has = idx.has_vector & mask
                if has.any():
                    lo, hi = float(cos[has].min()), float(cos[has].max())
                    semantic = np.where(has, (cos - lo) / (hi - lo) if hi > lo else 1.0, 0.0)
                    relevance = 0.5 * lex + 0.5 * semantic
        eligible = mask & (lex > 0) if semantic is None else mask & ((lex > 0) | (semantic > 0.5))
        score = np.where(eligible, relevance * idx.utility * boost, -1.0).astype(np.float32)
        n_ok = int(eligible.sum())
        if n_ok == 0:
            return []
        pool = min(n_ok, max(8 * k, 20))
        top = np.argpartition(-score, pool - 1)[:pool] if pool < len(score) else np.arange(len(score))
        top = top[np.argsort(-score[top], kind="stable")]
        hits: list[Hit] = []
        picked_words: list[frozenset[str]] = []
        for i in top:
            if score[i] < 0:
                break
            doc = idx.docs[int(i)]
            words = content_words(doc["text"])
            if any(jaccard(words, w) >= self.diversity for w in picked_words):
                continue
            picked_words.append(words)
            hits.append(Hit(Advice.from_doc(doc), float(score[i]), float(lex[i]),
                            None if semantic is None else float(semantic[i])))
            if len(hits) == k:
                break
        return hits

    def retrieve(self, query: Query, k: int = 3) -> list[Advice]:
        return [h.advice for h in self.search(query, k)]


def retrieve(store: AdviceStore, task_meta: Any, parent_source: str = "", k: int = 3,
             arch: str | None = None, embedder: Embedder | None = None) -> list[Advice]:
    """One-off retrieval (builds an index each call: use ``Retriever`` in a loop)."""
    return Retriever(store, embedder).retrieve(Query.for_task(task_meta, parent_source, arch), k)


__all__ = ["DTYPES", "Hit", "MAX_K", "Query", "Retriever", "kinds_compatible", "normalize_dtype",
           "retrieve"]


