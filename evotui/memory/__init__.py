"""The advice library (EvoMem): what worked, remembered across runs, curated by the human.

- ``store``: ``AdviceStore`` — TinyDB with crash-proof writes and a file lock (its documents:
  ``records``; export and import: ``sharing``; its errors: ``errors``);
- ``retrieve``: ``Retriever`` — hybrid BM25 (+ Ollama embeddings) top-K with boosts (the
  query: ``query``; the index over one generation of the library: ``advice_index``);
- ``hook``: ``MemoryHook`` — what the engine calls (retrieve, record_outcome, accept...);
- ``prompting``: advice as optional references in the mutation prompt;
- ``distill``: successful mutations → one sentence of proposed advice;
- ``audit``: weak, long, untagged, useless, duplicate and contradictory advice;
- ``coldstart``: the hand-written pack loaded into an empty library.

Nothing here imports ``textual`` (DESIGN §1, invariant 1).
"""

from evotui.memory.atomic import CorruptLibrary
from evotui.memory.model import STATUSES, Advice, Provenance
from evotui.memory.store import (
    AdviceError,
    AdviceStore,
    AmbiguousId,
    ImportResult,
    LibraryLocked,
    UnknownAdvice,
)

__all__ = [
    "STATUSES",
    "Advice",
    "AdviceError",
    "AdviceStore",
    "AmbiguousId",
    "CorruptLibrary",
    "ImportResult",
    "LibraryLocked",
    "Provenance",
    "UnknownAdvice",
]
