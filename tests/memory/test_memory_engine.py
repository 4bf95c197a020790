"""The advice library behind the engine: what the model is shown, what gets counted, and
the hook's own embeddings warm-up from the engine's worker threads."""

from __future__ import annotations

import asyncio

import pytest

from evotui.engine.events import VetoAdvice
from evotui.engine.loop import Engine
from evotui.engine.state import EngineConfig
from evotui.memory import AdviceStore
from evotui.memory.embed import OllamaEmbedder
from evotui.memory.hook import MemoryHook
from tests.engine_helpers import SOFTMAX_SEED, FakeEvaluator, ScriptedMutator, tagged
from tests.fake_ollama import closed_port_url

pytestmark = pytest.mark.timeout(60)


def test_accepted_advice_reaches_the_prompt_and_vetoed_never(softmax_task, tmp_path):
    store = AdviceStore(tmp_path / "advice.json", cold_start=False)
    good = store.new("Use tl.exp2 with a log2(e) factor for softmax rows", kind="softmax",
                     tags=["softmax", "exp2"], status="proposed", source="distilled")
    store.accept(good.id)
    bad = store.new("Use tl.exp for softmax rows with num_warps 1", kind="softmax",
                    tags=["softmax", "num_warps"])
    store.veto(bad.id)
    later = store.new("Keep softmax rows in registers with one program per row",
                      kind="softmax", tags=["softmax", "registers"])
    hook = MemoryHook(store, k=3)
    mut = ScriptedMutator(tagged)
    engine = Engine(softmax_task, FakeEvaluator(), mut,
                    EngineConfig(iterations=3, memory_k=3, concurrency=1),
                    seed_source=SOFTMAX_SEED, memory=hook)
    engine.send(VetoAdvice(later.id))  # the human vetoes during the run
    asyncio.run(engine.run())
    blocks = [r.context.advice_block for r in mut.requests]
    assert len(blocks) == 3 and all(good.text in b for b in blocks)
    assert not any(bad.text in b for b in blocks)
    assert not any(later.text in b for b in blocks[1:])
    assert all("optional" in b for b in blocks)
    assert store.get(later.id).status == "vetoed"
    got = store.get(good.id)
    assert got.shown == 3 and got.improved == 0  # the fake evaluator never improves


def test_retrieve_in_a_worker_thread_warms_embeddings_itself(tmp_path, fake_ollama, softmax_task):
    store = AdviceStore(tmp_path / "advice.json")
    emb = OllamaEmbedder(host=fake_ollama.url, cache_dir=tmp_path / "emb")
    hook = MemoryHook(store, k=3, embedder=emb)

    async def from_the_engine():
        return await asyncio.to_thread(hook.retrieve, softmax_task.meta, SOFTMAX_SEED, 3)

    got = asyncio.run(from_the_engine())
    assert len(got) == 3 and hook.embeddings_on is True
    assert all(h.semantic is not None for h in hook.last_hits)
    n = len(fake_ollama.requests_to("/api/embed"))
    asyncio.run(from_the_engine())
    assert len(fake_ollama.requests_to("/api/embed")) == n  # nothing left to fetch


def test_no_server_means_bm25_only_without_errors(tmp_path, softmax_task):
    store = AdviceStore(tmp_path / "advice.json")
    emb = OllamaEmbedder(host=closed_port_url(), cache_dir=tmp_path / "emb")
    hook = MemoryHook(store, k=3, embedder=emb)
    assert len(hook.retrieve(softmax_task.meta, SOFTMAX_SEED)) == 3
    assert hook.embeddings_on is False
    assert len(hook.retrieve(softmax_task.meta, SOFTMAX_SEED)) == 3  # not tried again


def test_retrieve_on_the_event_loop_never_blocks(tmp_path, fake_ollama, softmax_task):
    store = AdviceStore(tmp_path / "advice.json")
    emb = OllamaEmbedder(host=fake_ollama.url, cache_dir=tmp_path / "emb")
    hook = MemoryHook(store, k=3, embedder=emb)

    async def on_loop():
        first = hook.retrieve(softmax_task.meta, SOFTMAX_SEED)  # BM25 now, warm-up scheduled
        assert hook.last_hits and all(h.semantic is None for h in hook.last_hits)
        assert hook._warm_task is not None
        await hook._warm_task
        hook.retrieve(softmax_task.meta, SOFTMAX_SEED)
        return first

    assert len(asyncio.run(on_loop())) == 3
    assert all(h.semantic is not None for h in hook.last_hits)
