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
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np

from evotui.memory.bm25 import BM25
from evotui.memory.embed import Embedder
from evotui.memory.model import PRIOR_LOSSES, PRIOR_WINS, Advice
from evotui.memory.store import AdviceStore
from evotui.memory.suggest import has_hints
from evotui.memory.text import (
    CODE_NOISE,
    content_words,
    jaccard,
    normalize_arch,
    normalize_tags,
    tokenize,
)

MAX_K = 5
STATUS_BOOST = {"accepted": 1.5, "authored": 1.5, "proposed": 1.0}
KIND_FAMILIES: tuple[frozenset[str], ...] = (
    frozenset({"reduction", "softmax", "rmsnorm", "layernorm", "cross_entropy", "row_sum",
               "normalization", "logsumexp", "attention", "groupnorm", "batchnorm"}),
    frozenset({"gemm", "matmul", "bmm", "linear", "conv", "attention"}),
    frozenset({"elementwise", "activation", "pointwise", "add_gelu", "gelu", "silu"}),
)
DTYPES = ("fp32", "fp16", "bf16", "fp8", "int8", "tf32")
_DTYPE_ALIASES = {"float32": "fp32", "float16": "fp16", "half": "fp16", "bfloat16": "bf16",
                  "float": "fp32", "float8": "fp8"}
W_KIND, W_TAG, W_NAME, W_TEXT, W_CODE = 2.0, 1.5, 1.0, 1.0, 0.3


def kinds_compatible(advice_kind: str, task_kind: str) -> bool:
    a, t = advice_kind.lower(), task_kind.lower()
    if a in ("general", "any", "") or t in ("general", "any", "") or a == t:
        return True
    return any(a in fam and t in fam for fam in KIND_FAMILIES)


def normalize_dtype(d: str | None) -> str | None:
    if not d:
        return None
    d = str(d).lower().replace("torch.", "")
    return _DTYPE_ALIASES.get(d, d)


@dataclass(frozen=True)
class Query:
    kind: str = "general"
    tags: tuple[str, ...] = ()
    name: str = ""
    text: str = ""  # free text: the human's hint, an error to get past...
    source: str = ""  # the parent's code
    arch: str | None = None
    dtype: str | None = None
    ops: tuple[str, ...] = ()  # what the reference computes: relu, softmax, mm, ...
    sizes: str = ""  # its dominant sizes, "16 x 16384"

    @classmethod
    def for_task(cls, task_meta: Any, source: str = "", arch: str | None = None,
                 text: str = "") -> Query:
        """From a ``TaskMeta`` (or any object/dict with name, kind, tags[, dtype, arch, ops,
        sizes]: ``evotui.engine.task_facts.QueryMeta`` adds what the reference computes)."""
        get = task_meta.get if isinstance(task_meta, dict) else (
            lambda key, default=None: getattr(task_meta, key, default))
        tags = tuple(normalize_tags(list(get("tags", ()) or ())))
        dtype = normalize_dtype(get("dtype", None)) or next((t for t in tags if t in DTYPES), None)
        return cls(kind=str(get("kind", None) or "general"), tags=tags,
                   name=str(get("name", "") or ""), text=text, source=source or "",
                   arch=normalize_arch(arch or get("arch", None)), dtype=dtype,
                   ops=tuple(str(o) for o in get("ops", ()) or ()),
                   sizes=str(get("sizes", "") or ""))

    def embed_text(self) -> str:
        parts = [f"{self.kind} GPU kernel {self.name}".strip()]
        if self.tags:
            parts.append("tags: " + ", ".join(self.tags))
        if self.ops:
            parts.append("computes " + ", ".join(self.ops))
        if self.sizes:
            parts.append("sizes " + self.sizes)
        if self.dtype:
            parts.append(self.dtype)
        if self.text:
            parts.append(self.text)
        return ". ".join(parts)

    def terms(self) -> dict[str, float]:
        q: dict[str, float] = {}

        def add(tokens: Iterable[str], w: float) -> None:
            for tok in tokens:
                q[tok] = max(q.get(tok, 0.0), w)

        add(_code_tokens(self.source), W_CODE)
        add(tokenize(self.text), W_TEXT)
        add(tokenize(self.name), W_NAME)
        if self.dtype:
            add([self.dtype], W_NAME)
        add(tokenize(" ".join(self.tags)), W_TAG)
        add(tokenize(" ".join(self.ops)), W_TAG)
        if self.kind not in ("general", ""):
            add(tokenize(self.kind), W_KIND)
        return q


_code_memo: tuple[int, frozenset[str]] | None = None


def _code_tokens(source: str) -> frozenset[str]:
    global _code_memo
    if not source:
        return frozenset()
    key = hash(source)
    if _code_memo is not None and _code_memo[0] == key:
        return _code_memo[1]
    toks = frozenset(t for t in tokenize(source) if t not in CODE_NOISE and not t.isdigit())
    _code_memo = (key, toks)
    return toks


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


@dataclass(frozen=True)
class Hit:
    advice: Advice
    score: float
    lexical: float
    semantic: float | None


def _static(doc: dict[str, Any]) -> tuple:
    return (doc.get("id"), doc.get("updated"), doc.get("text"))


def _changed_positions(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[int] | None:
    """Positions whose document object changed, or None when the list itself changed.

    The store writes copy-on-write and a re-read reuses the objects of unchanged lines, so
    an unchanged document is the very same object from one generation to the next.
    """
    if len(old) != len(new):
        return None
    return [i for i, (a, b) in enumerate(zip(old, new, strict=True)) if a is not b]


class _Index:
    """Arrays over one generation of the library.

    Everything but the counters depends only on each document's content, whose changes bump
    its ``updated`` stamp (counters do not). When only counters changed since the previous
    generation (``record_outcome``), the previous index is reused and only the changed
    documents' counters are read again, so retrieval right after an outcome stays cheap.
    """

    def __init__(self, docs: list[dict[str, Any]], bm25: BM25, previous: _Index | None = None,
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

    def _build_static(self, docs: list[dict[str, Any]], previous: _Index | None) -> None:
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

class Retriever:
    """Ranks the library for a query. Cheap to call repeatedly: the index is cached."""

    def __init__(self, store: AdviceStore, embedder: Embedder | None = None,
                 diversity: float = 0.6) -> None:
        self.store = store
        self.embedder = embedder
        self.diversity = diversity
        self._index: _Index | None = None
        self._gen: object = object()
        self._tokens: dict[tuple, Counter[str]] = {}
        self._lock = threading.RLock()  # the engine calls from worker threads
        self._missing: tuple[int, int, list[str]] | None = None

    # -- index -----------------------------------------------------------------------------------
    def index(self) -> _Index:
        with self._lock:
            return self._refresh()

    def _refresh(self) -> _Index:
        snap = self.store.snapshot()
        if self._index is not None and snap.gen == self._gen:
            return self._index
        docs = snap.docs
        old = self._index
        changed = _changed_positions(old.docs, docs) if old is not None else None
        if old is not None and changed is not None and all(
            _static(old.docs[i]) == _static(docs[i]) for i in changed
        ):
            idx = _Index(docs, old.bm25, old, changed)  # only counters changed
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
            idx = _Index(docs, BM25(bags), old)
        self._index, self._gen = idx, snap.gen
        return idx

    def _vectors(self, idx: _Index) -> np.ndarray | None:
        with self._lock:
            return self._align_vectors(idx)

    def _align_vectors(self, idx: _Index) -> np.ndarray | None:
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


__all__ = ["Hit", "Query", "Retriever", "kinds_compatible", "retrieve"]


