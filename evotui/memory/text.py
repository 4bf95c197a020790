"""Text utilities shared by the advice library: tokens, normalised keys, similarity, arch names.

Pure functions, no I/O. Tokens keep exact identifiers such as ``tl.dot``, ``num_warps``,
``block_k`` or ``sm_90`` (what BM25 is good at) and add their parts (``tl``, ``dot``,
``num``, ``warps``) so that "warps" still meets ``num_warps``.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable

_TOKEN = re.compile(r"[a-z0-9_]+(?:\.[a-z0-9_]+)*")
_PARTS = re.compile(r"[._]")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SPACES = re.compile(r"\s+")
_PUNCT = re.compile(r"[^\w%+→-]+")

STOPWORDS = frozenset(
    """a an and are as at be by for from if in into is it its of on or so than that the then
    this to use using via when where which while with you your can does do not no only
    per each more less than over under should would will may might also""".split()
)

# Python/Triton boilerplate that says nothing about which advice fits a kernel.
CODE_NOISE = frozenset(
    """self def return import from class as torch triton tl nn module forward none true false
    pass if else elif for in range while not and or is lambda with int float str x y i j k
    n m args kwargs super init cuda device dtype shape contiguous empty empty_like grid
    jit program_id arange constexpr""".split()
)


def tokenize(text: str) -> list[str]:
    """Lower-case tokens: whole identifiers (``tl.dot``, ``num_warps``) plus their parts."""
    text = _CAMEL.sub("_", text).lower() if any(c.isupper() for c in text) else text.lower()
    out: list[str] = []
    for tok in _TOKEN.findall(text):
        tok = tok.strip("_.")
        if not tok or tok in STOPWORDS:
            continue
        out.append(tok)
        if "_" in tok or "." in tok:
            out.extend(p for p in _PARTS.split(tok) if len(p) > 1 and p not in STOPWORDS)
    return out


def content_words(text: str) -> frozenset[str]:
    """The set of whole tokens used for near-duplicate tests (no gain figures, no parts)."""
    words = set()
    for tok in _TOKEN.findall(text.lower().replace("%", " ")):
        tok = tok.strip("_.")
        if tok and tok not in STOPWORDS:
            words.add(tok)
    return frozenset(words)


def normalize_text(text: str) -> str:
    """The key under which two pieces of advice count as the same text."""
    text = unicodedata.normalize("NFKC", text).lower()
    text = _PUNCT.sub(" ", text)
    return _SPACES.sub(" ", text).strip()


def text_hash(text: str) -> str:
    return hashlib.sha1(normalize_text(text).encode()).hexdigest()[:16]


def jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    sa, sb = set(a), set(b)
    if not sa and not sb:
        return 1.0
    return len(sa & sb) / len(sa | sb)


def word_count(text: str) -> int:
    return len(text.split())


def first_sentence(text: str) -> str:
    """The first sentence (a full stop followed by a space or the end ends it)."""
    text = _SPACES.sub(" ", text).strip()
    m = re.search(r"(?<=[.!?])\s+(?=[A-Z`(\"'])", text)
    return text[: m.start()].strip() if m else text


def normalize_tags(tags: Iterable[str] | str | None) -> list[str]:
    """``"a, B ,b"`` or ``["a", "B"]`` → ``["a", "b"]``: lower-case, unique, in order."""
    if tags is None:
        return []
    if isinstance(tags, str):
        tags = tags.split(",")
    out: list[str] = []
    for t in tags:
        t = _SPACES.sub("-", str(t).strip().lower())
        if t and t not in out:
            out.append(t)
    return out


# -- GPU architectures ---------------------------------------------------------------------

_GPU_SM = {
    "b200": 100, "b100": 100, "gb200": 100, "h200": 90, "h100": 90, "gh200": 90, "h800": 90,
    "h20": 90, "l40s": 89, "l40": 89, "l4": 89, "4090": 89, "4080": 89, "a100": 80, "a800": 80,
    "a30": 80, "a10": 86, "a40": 86, "a6000": 86, "3090": 86, "3080": 86, "t4": 75, "2080": 75,
    "v100": 70, "p100": 60,
}
_ANY = {"", "any", "all", "*", "none", "generic"}


def normalize_arch(arch: str | None) -> str | None:
    """``"NVIDIA H200"``, ``"sm90"``, ``"9.0"``, ``"sm_90a"`` → ``"sm_90"``; None or "any" → None.

    Names this table does not know come back lower-cased (``"gfx942"``), so they still
    compare equal to themselves.
    """
    if arch is None:
        return None
    a = str(arch).strip().lower()
    if a in _ANY:
        return None
    m = re.fullmatch(r"(?:sm|compute)_?(\d{2,3})[a-z]?", a)
    if m:
        return f"sm_{m.group(1)}"
    m = re.fullmatch(r"(\d{1,2})\.(\d)", a)
    if m:
        return f"sm_{m.group(1)}{m.group(2)}"
    words = re.findall(r"[a-z]*\d+[a-z]*", a)
    for w in words:
        if w in _GPU_SM:
            return f"sm_{_GPU_SM[w]}"
    return a


def arch_compatible(advice_arch: str | None, task_arch: str | None) -> bool:
    """Advice without an arch fits every GPU; a task without a known arch accepts all."""
    a, t = normalize_arch(advice_arch), normalize_arch(task_arch)
    return a is None or t is None or a == t


# -- tags from text ---------------------------------------------------------------------------

KEYWORD_TAGS: tuple[tuple[str, str], ...] = (
    ("vectoriz", "vectorized-loads"), ("float4", "vectorized-loads"), ("coalesc", "coalescing"),
    ("num_warps", "num_warps"), ("warps", "num_warps"), ("num_stages", "num_stages"),
    ("stages", "num_stages"), ("autotun", "autotune"), ("persistent", "persistent-kernel"),
    ("fuse", "fusion"), ("fusing", "fusion"), ("fusion", "fusion"), ("epilogue", "epilogue"),
    ("tile", "tiling"), ("tiling", "tiling"), ("block_size", "block-size"),
    ("block size", "block-size"), ("shared memory", "shared-memory"), ("smem", "shared-memory"),
    ("l2", "l2-reuse"), ("group_m", "grouped-ordering"), ("online softmax", "online-softmax"),
    ("accumulat", "fp32-accumulation"), ("mask", "masks"), ("exp2", "exp2"), ("tf32", "tf32"),
    ("split", "split-reduction"), ("atomic", "atomics"), ("constexpr", "constexpr"),
    ("int32", "int32"), ("pipelin", "pipelining"), ("occupancy", "occupancy"),
    ("register", "registers"), ("bank conflict", "bank-conflicts"), ("__ldg", "read-only-cache"),
    ("tl.dot", "tl.dot"), ("tensor core", "tensor-cores"), ("launch", "launch-overhead"),
)


def suggest_tags(text: str, limit: int = 4) -> list[str]:
    """Tags that the words of ``text`` suggest (for distilled advice and the audit's fixes)."""
    low = text.lower()
    out: list[str] = []
    for needle, tag in KEYWORD_TAGS:
        if needle in low and tag not in out:
            out.append(tag)
    return out[:limit]
