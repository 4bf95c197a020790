"""What the engine calls: the advice library behind five small methods.

    hook = MemoryHook(AdviceStore(), k=3, arch="sm_90", embedder=OllamaEmbedder())
    await hook.warm(task.meta)                       # optional: fetch embeddings once
    shown = hook.retrieve(task.meta, parent_source)  # list[Advice], fast, no network
    prompt += format_advice(shown)                   # evotui.memory.prompting
    ...evaluate the child...
    hook.record_outcome([a.id for a in shown], improved=child_beats_parent)

``k`` is 0–5 (0 turns memory off: nothing is retrieved and nothing is counted). The hook
also takes the human's decisions (``accept``, ``veto``, ``author``). Every write is on disk
when the call returns (a few ms to a few tens of ms on a 10,000-piece library); call
``record_outcome`` from a thread (``asyncio.to_thread``) if that matters to the event loop.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

from evotui.memory.embed import Embedder
from evotui.memory.model import Advice
from evotui.memory.retrieve import MAX_K, Hit, Query, Retriever
from evotui.memory.store import AdviceStore

log = logging.getLogger(__name__)


class MemoryHook:
    def __init__(
        self,
        store: AdviceStore,
        k: int = 3,
        arch: str | None = None,
        embedder: Embedder | None = None,
    ) -> None:
        self.store = store
        self.k = max(0, min(int(k), MAX_K))
        self.arch = arch
        self.embedder = embedder
        self.retriever = Retriever(store, embedder)
        self.last_hits: list[Hit] = []  # the scores behind the last retrieval (for the UI)

    @property
    def enabled(self) -> bool:
        return self.k > 0

    def query(self, task_meta: Any, parent_source: str = "", hint: str = "") -> Query:
        return Query.for_task(task_meta, parent_source, self.arch, text=hint)

    def retrieve(self, task_meta: Any, parent_source: str = "", k: int | None = None,
                 hint: str = "") -> list[Advice]:
        """Top-k advice for this task and parent (never vetoed advice). No network I/O."""
        k = self.k if k is None else max(0, min(int(k), MAX_K))
        if k == 0:
            self.last_hits = []
            return []
        self.last_hits = self.retriever.search(self.query(task_meta, parent_source, hint), k)
        return [h.advice for h in self.last_hits]

    def record_outcome(self, advice_ids: Iterable[str], improved: bool) -> None:
        """The advice in ``advice_ids`` was shown for one child; did the child improve?"""
        ids = list(advice_ids)
        if ids and self.k > 0:
            self.store.record_outcome(ids, bool(improved))

    def accept(self, advice_id: str) -> Advice:
        return self.store.accept(advice_id)

    def veto(self, advice_id: str) -> Advice:
        return self.store.veto(advice_id)

    def author(self, text: str, kind: str = "general", tags: Iterable[str] | str = (),
               arch: str | None = None) -> Advice:
        """Advice written by the human (status ``authored``); returns it with its id."""
        if isinstance(tags, str):
            tags = tags.split(",")
        return self.store.new(text, kind=kind, tags=list(tags), arch=arch)

    async def warm(self, task_meta: Any, hint: str = "") -> bool:
        """Fetch embeddings for the query and for advice not yet embedded. Returns whether
        semantic retrieval is on; False (BM25 only) when there is no embedder, server or
        model — never raises for those."""
        if self.embedder is None or self.k == 0:
            return False
        from evotui.llm import LLMError

        texts = [self.query(task_meta, hint=hint).embed_text()] + self.retriever.missing_vectors()
        try:
            await self.embedder.embed(texts)
        except LLMError as e:
            log.info("advice retrieval without embeddings: %s", e)
            return False
        return True


__all__ = ["MemoryHook"]
