"""What the engine calls: the advice library behind five small methods.

    hook = MemoryHook(AdviceStore(), k=3, arch="sm_90", embedder=OllamaEmbedder())
    await hook.warm(task.meta)                       # optional: fetch embeddings once
    shown = hook.retrieve(task.meta, parent_source)  # list[Advice], fast, no network
    moves = hook.retrieve_tunables(task.meta, src)   # only advice the param mutator can follow
    prompt += format_advice(shown)                   # evotui.memory.prompting
    ...evaluate the child...
    hook.record_outcome([a.id for a in shown], improved=child_beats_parent)
    summary = await hook.learn(mutations, ask)       # after the run: proposed advice

``k`` is 0–5 (0 turns memory off: nothing is retrieved and nothing is counted). The hook
also takes the human's decisions (``accept``, ``veto``, ``author``). Every write is on disk
when the call returns (a few ms to a few tens of ms on a 10,000-piece library); the engine
calls these sync methods through ``asyncio.to_thread``.

Embeddings: with an ``embedder``, ``retrieve`` called from a worker thread (no running event
loop there) fetches what is missing itself, a bounded batch per call, so semantic retrieval
switches on by itself; on an event loop it never blocks and schedules that in the
background instead. A server or model that is not there turns embeddings off for the
hook's lifetime (BM25 only), without errors.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterable
from typing import Any

from evotui.core.advice_library import AdviceLibrary
from evotui.memory.embed import Embedder
from evotui.memory.model import Advice
from evotui.memory.retrieve import MAX_K, Hit, Query, Retriever
from evotui.memory.store import AdviceStore

log = logging.getLogger(__name__)


class MemoryHook(AdviceLibrary):
    """The library on disk (``AdviceStore``) behind ``AdviceLibrary``: it takes the human's
    decisions and distils runs."""

    decides = True
    learns = True

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
        self.embeddings_on: bool | None = None  # None: not tried yet
        self._warm_lock = threading.Lock()
        self._warm_task: asyncio.Task | None = None

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
        self._auto_warm(task_meta, hint)
        self.last_hits = self.retriever.search(self.query(task_meta, parent_source, hint), k)
        return [h.advice for h in self.last_hits]

    def retrieve_tunables(self, task_meta: Any, parent_source: str = "",
                          k: int | None = None) -> list[Advice]:
        """Top-k advice that suggests tunable moves, for the parameter mutator (which can
        follow nothing else). Never vetoed advice; no network I/O."""
        k = self.k if k is None else max(0, min(int(k), MAX_K))
        if k == 0:
            self.last_hits = []
            return []
        self.last_hits = self.retriever.search(self.query(task_meta, parent_source), k,
                                               tunable_only=True)
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
               arch: str | None = None, conditions: dict[str, Any] | None = None,
               **_: Any) -> Advice:
        """Advice written by the human (status ``authored``); returns it with its id."""
        if isinstance(tags, str):
            tags = tags.split(",")
        return self.store.new(text, kind=kind, tags=list(tags), arch=arch,
                              conditions=dict(conditions or {}))

    async def distill(self, mutations: Iterable[Any], ask: Any = None) -> list[Advice]:
        """After a run: ``evotui.memory.distill.Mutation``s with gain > 5 % → proposed advice
        (template for tunable changes, ``ask(prompt) -> str`` for the rest), near-duplicates
        merged. See ``evotui.memory.distill.distill_run``."""
        from evotui.memory.distill import distill_run

        return await distill_run(self.store, mutations, ask)

    async def learn(self, mutations: Iterable[Any], ask: Any = None, **options: Any) -> Any:
        """After a run: like ``distill`` but LLM mutations without a model get a sentence from
        their description or diff, children already distilled are skipped, and the answer is
        an ``evotui.memory.learn.DistillSummary`` (proposed / merged counts for the report).
        ``options`` go to ``evotui.memory.learn.distill_mutations``."""
        from evotui.memory.learn import distill_mutations

        return await distill_mutations(self.store, mutations, ask, **options)

    async def warm(self, task_meta: Any, hint: str = "", limit: int | None = None) -> bool:
        """Fetch embeddings for the query and for advice not embedded yet (at most ``limit``
        of them). Returns whether semantic retrieval is on; False (BM25 only) when there is
        no embedder, server or model — never raises for those."""
        if self.embedder is None or self.k == 0 or self.embeddings_on is False:
            return False
        from evotui.llm import LLMError

        missing = self.retriever.missing_vectors()
        if limit is not None:
            missing = missing[:limit]
        texts = [self.query(task_meta, hint=hint).embed_text(), *missing]
        try:
            await self.embedder.embed(texts)
        except LLMError as e:
            log.info("advice retrieval without embeddings: %s", e)
            self.embeddings_on = False
            return False
        self.embeddings_on = True
        return True

    def _auto_warm(self, task_meta: Any, hint: str) -> None:
        if self.embedder is None or self.embeddings_on is False:
            return
        query_text = self.query(task_meta, hint=hint).embed_text()
        if (self.embedder.cached([query_text])[0] is not None
                and not self.retriever.missing_vectors()):
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is None:  # a worker thread: fetching here blocks nobody
            if self._warm_lock.acquire(blocking=False):
                try:
                    asyncio.run(self.warm(task_meta, hint, limit=AUTO_WARM_BATCH))
                finally:
                    self._warm_lock.release()
        elif self._warm_task is None or self._warm_task.done():
            self._warm_task = loop.create_task(self.warm(task_meta, hint, limit=AUTO_WARM_BATCH))


AUTO_WARM_BATCH = 256

__all__ = ["MemoryHook"]
