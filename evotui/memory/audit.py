"""Auditing the library: what to prune, shorten, tag, veto or merge — with the command.

Findings (the seed's checks plus the ones a growing library needs):

- ``weak_gain``: measured gain below 3 %;
- ``too_long``: over 40 words or 300 characters (advice is one sentence);
- ``no_tags``: retrieval leans on tags;
- ``never_helped``: shown at least 10 times, the child never improved;
- ``duplicate``: near-duplicates (token Jaccard ≥ 0.8, figures aside) in the same kind;
- ``contradiction``: same kind and overlapping tags, one says increase and the other
  decrease the same parameter (``num_warps 4→8`` vs ``8→4``, "raise num_stages" vs "lower
  num_stages"), under the same conditions.

Vetoed advice is never reported: it is already out of the prompts.
"""

from __future__ import annotations

import re
import shlex
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from evotui.memory.model import Advice
from evotui.memory.text import content_words, first_sentence, jaccard, suggest_tags, word_count

WEAK_GAIN = 0.03
MAX_WORDS = 40
MAX_CHARS = 300
NEVER_HELPED_AFTER = 10
DUPLICATE = 0.8
_COMMON_DF = 0.2  # tokens in more than this share of a kind's advice do not pair candidates

CODES = ("weak_gain", "too_long", "no_tags", "never_helped", "duplicate", "contradiction")


@dataclass(frozen=True)
class Finding:
    code: str
    advice_id: str
    message: str
    fix: str  # a command line that applies the fix
    other_id: str | None = None


def _q(text: str) -> str:
    return shlex.quote(text)


def _single(a: Advice) -> list[Finding]:
    out: list[Finding] = []
    if a.gain is not None and a.gain < WEAK_GAIN:
        out.append(Finding("weak_gain", a.id, f"measured gain {a.gain * 100:+.1f} % is below "
                           f"{WEAK_GAIN * 100:.0f} %: probably noise",
                           f"evotui advice veto {a.id}"))
    words = word_count(a.text)
    if words > MAX_WORDS or len(a.text) > MAX_CHARS:
        short = first_sentence(a.text)
        fix = (f"evotui advice edit {a.id} --text {_q(short)}"
               if short != a.text and word_count(short) <= MAX_WORDS and len(short) <= MAX_CHARS
               else f"evotui advice edit {a.id}")
        out.append(Finding("too_long", a.id, f"{words} words, {len(a.text)} characters: advice "
                           f"should be one sentence of at most {MAX_WORDS} words", fix))
    if not a.tags:
        tags = suggest_tags(a.text) or ([a.kind] if a.kind != "general" else [])
        fix = (f"evotui advice edit {a.id} --tags {_q(','.join(tags))}" if tags
               else f"evotui advice edit {a.id}")
        out.append(Finding("no_tags", a.id, "no tags: retrieval will rarely find it", fix))
    if a.shown >= NEVER_HELPED_AFTER and a.improved == 0:
        out.append(Finding("never_helped", a.id, f"shown {a.shown} times, the child never "
                           "improved", f"evotui advice veto {a.id}"))
    return out


def _figureless(text: str) -> frozenset[str]:
    return frozenset(w for w in content_words(text) if not re.fullmatch(r"[+-]?\d+(\.\d+)?", w))


def _stronger(a: Advice, b: Advice) -> tuple[Advice, Advice]:
    """(keep, drop): keep the human's decision, then the better evidence, then the older."""
    rank = {"accepted": 3, "authored": 2, "proposed": 1, "vetoed": 0}

    def key(x: Advice) -> tuple:
        return (rank[x.status], len(x.provenance), x.shown, x.gain or 0.0, x.created < "~")

    return (a, b) if key(a) >= key(b) else (b, a)


def _duplicates(items: Sequence[Advice]) -> list[Finding]:
    out: list[Finding] = []
    by_kind: dict[str, list[Advice]] = defaultdict(list)
    for a in items:
        by_kind[a.kind].append(a)
    for group in by_kind.values():
        words = [_figureless(a.text) for a in group]
        postings: dict[str, list[int]] = defaultdict(list)
        for i, ws in enumerate(words):
            for w in ws:
                postings[w].append(i)
        limit = max(2, int(_COMMON_DF * len(group)))
        seen: set[tuple[int, int]] = set()
        for i, ws in enumerate(words):
            cands: set[int] = set()
            for w in ws:
                p = postings[w]
                if len(p) <= limit:
                    cands.update(j for j in p if j > i)
            if not cands and len(group) <= 200:  # small groups: compare everything
                cands = set(range(i + 1, len(group)))
            for j in cands:
                if (i, j) in seen:
                    continue
                seen.add((i, j))
                if jaccard(ws, words[j]) >= DUPLICATE:
                    keep, drop = _stronger(group[i], group[j])
                    out.append(Finding("duplicate", drop.id, f"near-duplicate of {keep.id}",
                                       f"evotui advice merge {keep.id} {drop.id}", keep.id))
    return out


_UP = r"increas\w*|rais\w*|rais|larger|bigger|more|higher|grow|double|boost"
_DOWN = r"decreas\w*|lower\w*|reduc\w*|smaller|fewer|less|shrink|halve|cut"
_PARAM = r"([A-Za-z_][A-Za-z0-9_]*(?:\s+size)?)"
_PARAM_ALIASES = {"warps": "num_warps", "stages": "num_stages", "block": "block_size",
                  "block size": "block_size", "tile": "block_size", "tile size": "block_size",
                  "tiles": "block_size", "blocks": "block_size", "block_size": "block_size"}


def _param(name: str) -> str | None:
    """The parameter a word names, or None when it does not look like one."""
    n = name.strip()
    low = n.lower()
    if low in _PARAM_ALIASES:
        return _PARAM_ALIASES[low]
    if "_" in n or (n.isupper() and len(n) > 1):
        return low
    return None


_CHANGE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:=\s*)?(?:(\d+)\s*(?:→|->)\s*(\d+)"
                     r"|from\s+(\d+)\s+to\s+(\d+))")


def directions(text: str) -> dict[str, int]:
    """Parameters a piece of advice moves, and which way: {"num_warps": +1, ...}."""
    found: dict[str, int] = {}
    for m in _CHANGE.finditer(text):
        p = _param(m.group(1))
        old, new = (m.group(2), m.group(3)) if m.group(2) else (m.group(4), m.group(5))
        if p and int(old) != int(new):
            found[p] = 1 if int(new) > int(old) else -1
    for sign, pattern in ((1, _UP), (-1, _DOWN)):
        for m in re.finditer(rf"\b(?:{pattern})\b\s+(?:the\s+)?{_PARAM}", text, re.I):
            p = _param(m.group(1))
            if p and p not in found:
                found[p] = sign
    return found


def _contradictions(items: Sequence[Advice]) -> list[Finding]:
    out: list[Finding] = []
    moving = [(a, directions(a.text)) for a in items]
    moving = [(a, d) for a, d in moving if d]
    for i, (a, da) in enumerate(moving):
        for b, db in moving[i + 1:]:
            if a.kind != b.kind or not (set(a.tags) & set(b.tags) or not a.tags and not b.tags):
                continue
            ca = {k: v for k, v in a.conditions.items() if k != "template"}
            cb = {k: v for k, v in b.conditions.items() if k != "template"}
            if ca and cb and ca != cb:
                continue  # different shapes or dtypes: both may be right
            clash = sorted(p for p in da.keys() & db.keys() if da[p] != db[p])
            if clash:
                keep, drop = _stronger(a, b)
                out.append(Finding(
                    "contradiction", drop.id,
                    f"says the opposite of {keep.id} about {', '.join(clash)} "
                    "(veto one, or narrow their conditions)",
                    f"evotui advice veto {drop.id}", keep.id))
    return out


def audit(advice: Sequence[Advice]) -> list[Finding]:
    """All findings, grouped by code in the order of ``CODES``."""
    live = [a for a in advice if a.status != "vetoed"]
    findings = [f for a in live for f in _single(a)]
    findings += _duplicates(live)
    findings += _contradictions(live)
    order = {c: i for i, c in enumerate(CODES)}
    return sorted(findings, key=lambda f: (order[f.code], f.advice_id))
