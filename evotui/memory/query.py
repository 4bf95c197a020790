"""What retrieval looks for: a ``Query`` made from a task (its kind, tags, name, dtype, arch,
the reference's ops and sizes, the parent's code, free text), its weighted BM25 terms and
embedding text; which advice kinds fit a task's kind (``kinds_compatible``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from evotui.memory.text import CODE_NOISE, normalize_arch, normalize_tags, tokenize

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
