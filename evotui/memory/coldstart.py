"""The cold-start pack: hand-written Triton/CUDA advice shipped with evotui.

Loaded into an empty library the first time it is used (``AdviceStore`` does this once;
removing the pieces later does not bring them back). Ids, dates and provenance are fixed,
so every library holds the same cold-start records and export/import between libraries
merges them instead of duplicating them.
"""

from __future__ import annotations

import hashlib
import json
from importlib import resources

from evotui.memory.model import Advice, Provenance
from evotui.memory.text import normalize_tags, normalize_text

PACK = "coldstart.json"


def cold_start_id(text: str) -> str:
    return hashlib.sha1(("cold-start:" + normalize_text(text)).encode()).hexdigest()[:8]


def load_pack() -> list[Advice]:
    raw = json.loads(resources.files("evotui.memory").joinpath(PACK).read_text(encoding="utf-8"))
    date = raw["date"]
    out = []
    for item in raw["advice"]:
        out.append(
            Advice(
                id=cold_start_id(item["text"]),
                text=item["text"],
                kind=item.get("kind", "general"),
                tags=tuple(normalize_tags(item.get("tags"))),
                arch=item.get("arch"),
                # {"tunables": {"num_warps": 8}}: moves the parameter mutator can follow
                conditions=dict(item.get("conditions") or {}),
                provenance=(Provenance(source="cold-start", date=date),),
                status="proposed",
                created=date,
                updated=date,
                decided=date,
            )
        )
    return out
