"""Retrieval, the engine's hook, the prompt block and embeddings (against the fake Ollama)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evotui.memory import AdviceStore
from evotui.memory.embed import OllamaEmbedder
from evotui.memory.hook import MemoryHook
from evotui.memory.prompting import format_advice
from evotui.memory.retrieve import Query, Retriever, kinds_compatible
from evotui.task.model import TaskMeta

ROOT = Path(__file__).resolve().parents[2]


def _env() -> dict[str, str]:
    return dict(os.environ, PYTHONPATH=str(ROOT))


SOFTMAX = TaskMeta(name="softmax", kind="softmax", tags=("reduction", "row-wise", "fp32"))
GEMM = TaskMeta(name="matmul", kind="gemm", tags=("gemm", "bf16"))
PARENT = """
@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    x = tl.load(x_ptr + row * n_cols + tl.arange(0, BLOCK_SIZE))
    y = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * n_cols + tl.arange(0, BLOCK_SIZE), y / tl.sum(y, axis=0))
# launched with num_warps=4
"""


@pytest.fixture
def store(tmp_path, monkeypatch) -> AdviceStore:
    monkeypatch.setenv("EVOTUI_HOME", str(tmp_path))
    return AdviceStore()


def test_cold_start_pack_is_found_for_a_softmax_task(store):
    hook = MemoryHook(store, k=3, arch="NVIDIA H200")
    got = hook.retrieve(SOFTMAX, PARENT)
    assert len(got) == 3
    assert any("softmax" in a.text.lower() or "row" in a.text.lower() for a in got)
    assert all(kinds_compatible(a.kind, "softmax") for a in got)


def test_vetoed_advice_is_never_retrieved(store):
    hook = MemoryHook(store, k=5)
    first = hook.retrieve(SOFTMAX, PARENT)
    for a in first:
        hook.veto(a.id)
    for _ in range(3):
        again = hook.retrieve(SOFTMAX, PARENT)
        assert again and not {a.id for a in again} & {a.id for a in first}
    vetoed = {a.id for a in store.all() if a.status == "vetoed"}
    for task in (SOFTMAX, GEMM, TaskMeta(name="x", kind="general")):
        assert not {a.id for a in hook.retrieve(task, PARENT)} & vetoed
    assert "vetoed" not in format_advice(hook.retrieve(SOFTMAX, PARENT))


def test_accepted_ranks_above_an_otherwise_equal_proposed_one(tmp_path):
    store = AdviceStore(tmp_path / "advice.json", cold_start=False)
    a = store.new("Use num_warps 8 for wide softmax rows (variant one)", kind="softmax",
                  tags=["num_warps"], status="proposed", source="distilled")
    b = store.new("Use num_warps 8 for wide softmax rows (variant two)", kind="softmax",
                  tags=["num_warps"], status="proposed", source="distilled")
    hook = MemoryHook(store, k=1)
    top = hook.retrieve(SOFTMAX, PARENT)[0]
    other = b if top.id == a.id else a
    hook.accept(other.id)
    assert hook.retrieve(SOFTMAX, PARENT)[0].id == other.id
    hook.accept(top.id)
    hook.veto(other.id)
    assert hook.retrieve(SOFTMAX, PARENT)[0].id == top.id


def test_win_rate_boosts_and_record_outcome_counts(tmp_path):
    store = AdviceStore(tmp_path / "advice.json", cold_start=False)
    a = store.new("Raise num_warps for softmax rows (first)", kind="softmax", status="proposed")
    b = store.new("Raise num_warps for softmax rows (second)", kind="softmax", status="proposed")
    hook = MemoryHook(store, k=1)
    loser = hook.retrieve(SOFTMAX, PARENT)[0]
    winner = b if loser.id == a.id else a
    for _ in range(6):
        hook.record_outcome([loser.id], improved=False)
        hook.record_outcome([winner.id], improved=True)
    assert hook.retrieve(SOFTMAX, PARENT)[0].id == winner.id
    assert store.get(winner.id).improved == 6 and store.get(loser.id).shown == 6


def test_kind_and_arch_filters(tmp_path):
    store = AdviceStore(tmp_path / "advice.json", cold_start=False)
    gemm = store.new("Group program ids by GROUP_M for L2 reuse", kind="gemm", tags=["gemm"])
    ampere = store.new("Use 2 stages for softmax rows on this GPU", kind="softmax", arch="A100")
    hopper = store.new("Use 4 stages for softmax rows on this GPU", kind="softmax", arch="H200")
    anyarch = store.new("Use the online softmax for long rows", kind="softmax")
    hook = MemoryHook(store, k=5, arch="sm_90")
    ids = {a.id for a in hook.retrieve(SOFTMAX, PARENT + " GROUP_M gemm")}
    assert gemm.id not in ids and ampere.id not in ids
    assert {hopper.id, anyarch.id} <= ids
    assert ampere.id in {a.id for a in MemoryHook(store, k=5).retrieve(SOFTMAX, "")}  # arch unknown


def test_k_zero_turns_memory_off(store):
    hook = MemoryHook(store, k=0)
    assert hook.retrieve(SOFTMAX, PARENT) == []
    a = store.all()[0]
    hook.record_outcome([a.id], improved=True)
    assert store.get(a.id).shown == 0
    assert MemoryHook(store, k=9).k == 5
    assert len(MemoryHook(store, k=3).retrieve(SOFTMAX, PARENT, k=5)) == 5


def test_index_follows_changes(store):
    r = Retriever(store)
    q = Query.for_task(SOFTMAX, PARENT)
    before = {h.advice.id for h in r.search(q, 5)}
    new = store.new("For softmax rows use num_warps 16 when n_cols is 16384 or more",
                    kind="softmax", tags=["num_warps", "softmax", "row-wise", "reduction"])
    store.accept(new.id)
    after = [h.advice.id for h in r.search(q, 5)]
    assert new.id in after and new.id not in before


def test_prompt_block_is_optional_references_with_gain_and_tags(store):
    a = store.new("BLOCK_SIZE 1024→4096: +12 % on softmax 8192×8192 fp32, H200", kind="softmax",
                  tags=["block-size", "softmax"], status="proposed", source="distilled",
                  gain=0.12)
    store.record_outcome([a.id], True)
    text = format_advice([store.get(a.id)])
    assert "optional" in text and "not instructions" in text
    assert "+12 %" in text and "block-size" in text and "helped 1 of 1" in text
    assert "must" not in text.lower().split("notes")[0]
    assert format_advice([]) == ""


def test_embeddings_against_the_fake_ollama(store, fake_ollama, tmp_path):
    emb = OllamaEmbedder("nomic-embed-text", host=fake_ollama.url, cache_dir=tmp_path / "emb")
    hook = MemoryHook(store, k=3, embedder=emb)
    assert asyncio.run(hook.warm(SOFTMAX)) is True
    calls = len(fake_ollama.requests_to("/api/embed"))
    assert calls >= 1
    hits = hook.retriever.search(hook.query(SOFTMAX, PARENT), 3)
    assert hits and all(h.semantic is not None for h in hits)
    assert asyncio.run(hook.warm(SOFTMAX)) is True
    assert len(fake_ollama.requests_to("/api/embed")) == calls  # all cached now
    assert list((tmp_path / "emb").glob("*.npz"))
    # a new process (here: a new embedder) uses the cache on disk, no server needed
    fresh = OllamaEmbedder("nomic-embed-text", host="http://127.0.0.1:9", cache_dir=tmp_path / "emb")
    hits2 = Retriever(store, fresh).search(hook.query(SOFTMAX, PARENT), 3)
    assert [h.advice.id for h in hits2] == [h.advice.id for h in hits]


def test_missing_embedding_model_falls_back_to_bm25(store, fake_ollama, tmp_path):
    emb = OllamaEmbedder("not-pulled-embed", host=fake_ollama.url, cache_dir=tmp_path / "emb")
    hook = MemoryHook(store, k=3, embedder=emb)
    assert asyncio.run(hook.warm(SOFTMAX)) is False
    got = hook.retrieve(SOFTMAX, PARENT)
    assert len(got) == 3 and all(h.semantic is None for h in hook.last_hits)


def test_memory_never_imports_textual():
    code = ("import sys, evotui.memory, evotui.memory.hook, evotui.memory.distill, "
            "evotui.memory.audit, evotui.memory.retrieve, evotui.cli.advice; "
            "print('textual' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env=_env())
    assert out.stdout.strip() == "False"


def test_retrieval_in_one_thread_while_another_writes(store):
    import threading

    hook = MemoryHook(store, k=3)
    ids = [a.id for a in store.all()]
    errors: list[BaseException] = []
    stop = threading.Event()

    def reader():
        try:
            while not stop.is_set():
                assert len(hook.retrieve(SOFTMAX, PARENT)) == 3
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    t = threading.Thread(target=reader)
    t.start()
    try:
        for i, advice_id in enumerate(ids[:20]):
            (store.accept if i % 2 else store.veto)(advice_id)
            store.record_outcome(ids[20:23], improved=bool(i % 3))
            store.update(advice_id, tags=("t", str(i)))
    finally:
        stop.set()
        t.join(10)
    assert not errors
    vetoed = {a.id for a in store.all() if a.status == "vetoed"}
    assert not {a.id for a in hook.retrieve(SOFTMAX, PARENT)} & vetoed


def test_index_follows_another_process(store, tmp_path):
    hook = MemoryHook(store, k=5)
    hook.retrieve(SOFTMAX, PARENT)
    code = ("from evotui.memory import AdviceStore; s = AdviceStore(); "
            "a = s.new('For softmax rows try num_warps 16 with BLOCK_SIZE 16384', kind='softmax', "
            "tags=['softmax', 'num_warps', 'row-wise']); s.accept(a.id); print(a.id)")
    out = subprocess.run([sys.executable, "-c", code], env=_env(), capture_output=True,
                         text=True, check=True).stdout.split()[-1]
    assert out in {a.id for a in hook.retrieve(SOFTMAX, PARENT)}
    code = f"from evotui.memory import AdviceStore; AdviceStore().veto('{out}')"
    subprocess.run([sys.executable, "-c", code], env=_env(), check=True)
    assert out not in {a.id for a in hook.retrieve(SOFTMAX, PARENT)}
