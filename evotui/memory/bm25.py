"""A small BM25 (Okapi, k1=1.2, b=0.75) over pre-tokenised documents, scored with numpy.

Why our own: at ≤ 10^4–10^5 one-sentence documents a few dozen lines suffice, and the
index needs weighted query terms (task kind > tags > parent-code identifiers), which
``rank-bm25`` lacks and ``bm25s`` adds scipy for. Postings are stored CSR-style (per term: doc
indices and precomputed BM25 weights), so a query costs one vector add per query term.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np


class BM25:
    def __init__(self, docs: Sequence[Mapping[str, int]], k1: float = 1.2, b: float = 0.75) -> None:
        """``docs``: one term-frequency mapping per document (e.g. a ``Counter`` of tokens)."""
        self.n_docs = len(docs)
        vocab: dict[str, int] = {}
        rows: list[int] = []
        cols: list[int] = []
        tfs: list[int] = []
        lengths = np.zeros(self.n_docs, dtype=np.float32)
        for i, tf in enumerate(docs):
            total = 0
            for term, count in tf.items():
                cols.append(vocab.setdefault(term, len(vocab)))
                rows.append(i)
                tfs.append(count)
                total += count
            lengths[i] = total
        self.vocab = vocab
        n_terms = len(vocab)
        if not cols:
            self.indptr = np.zeros(n_terms + 1, dtype=np.int64)
            self.doc_idx = np.zeros(0, dtype=np.int32)
            self.weights = np.zeros(0, dtype=np.float32)
            return
        col = np.asarray(cols, dtype=np.int64)
        row = np.asarray(rows, dtype=np.int32)
        tf_arr = np.asarray(tfs, dtype=np.float32)
        df = np.bincount(col, minlength=n_terms).astype(np.float32)
        idf = np.log1p((self.n_docs - df + 0.5) / (df + 0.5))
        avgdl = float(lengths.mean()) or 1.0
        norm = k1 * (1.0 - b + b * lengths[row] / avgdl)
        w = idf[col] * tf_arr * (k1 + 1.0) / (tf_arr + norm)
        order = np.argsort(col, kind="stable")
        self.doc_idx = row[order]
        self.weights = w[order].astype(np.float32)
        self.indptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(df.astype(np.int64), out=self.indptr[1:])

    def scores(self, query: Mapping[str, float]) -> np.ndarray:
        """BM25 score of every document for a weighted bag of query terms."""
        out = np.zeros(self.n_docs, dtype=np.float32)
        vocab, indptr = self.vocab, self.indptr
        for term, qw in query.items():
            t = vocab.get(term)
            if t is None or qw == 0:
                continue
            lo, hi = indptr[t], indptr[t + 1]
            out[self.doc_idx[lo:hi]] += np.float32(qw) * self.weights[lo:hi]
        return out


def bag(tokens: Sequence[str]) -> Counter[str]:
    return Counter(tokens)
