"""Distillation (template and model) with near-duplicate merging, and the audit."""

from __future__ import annotations

import asyncio

import pytest

from evotui.memory import Advice, AdviceStore
from evotui.memory.audit import audit, directions
from evotui.memory.distill import (
    Mutation,
    TaskInfo,
    clean_sentence,
    distill_llm,
    distill_params,
    distill_run,
    merge_or_add,
    template_text,
)

SOFTMAX = TaskInfo("softmax", "softmax", "8192x8192", "fp32", ("reduction",))
CHANGES = {"BLOCK_SIZE": (1024, 4096), "num_warps": (4, 8)}


@pytest.fixture
def store(tmp_path) -> AdviceStore:
    return AdviceStore(tmp_path / "advice.json", cold_start=False)


def _m(gain: float, child: str, **kw) -> Mutation:
    base = dict(task=SOFTMAX, gain=gain, parent="c1", child=child, run="run-1",
                backend="triton", gpu="NVIDIA H200", changes=CHANGES)
    base.update(kw)
    return Mutation(**base)


def test_template_sentence():
    assert template_text(SOFTMAX, "NVIDIA H200", CHANGES, 0.12) == (
        "BLOCK_SIZE 1024→4096, num_warps 4→8: +12 % on softmax 8192×8192 fp32, H200")
    a = distill_params(_m(0.12, "c2"))
    assert a.status == "proposed" and a.arch == "sm_90" and a.gain == 0.12
    assert a.provenance[0].source == "distilled" and a.provenance[0].child == "c2"
    assert {"num_warps", "block_size", "fp32"} <= set(a.tags)


def test_near_duplicates_are_merged_with_provenance(store):
    first, merged = merge_or_add(store, distill_params(_m(0.12, "c2")))
    assert not merged
    second, merged = merge_or_add(store, distill_params(_m(0.14, "c9", run="run-2")))
    assert merged and second.id == first.id and len(store) == 1
    assert len(second.provenance) == 2 and second.gain == pytest.approx(0.13)
    assert "+13 % (median of 2 runs)" in second.text
    other = distill_params(_m(0.2, "c4", changes={"num_warps": (4, 8)}))
    assert not merge_or_add(store, other)[1] and len(store) == 2


def test_llm_sentences_near_duplicates_merge(store):
    async def ask(prompt: str) -> str:
        assert "softmax" in prompt and "+ y = tl.exp2" in prompt
        return "<think>the diff swaps exp</think>\nAdvice: Use tl.exp2 with a log2(e) factor for the softmax exponent."

    m = _m(0.08, "c5", changes=None, diff="- y = tl.exp(x)\n+ y = tl.exp2(x * 1.4427)")
    a = asyncio.run(distill_llm(ask, m))
    assert a is not None and a.text == "Use tl.exp2 with a log2(e) factor for the softmax exponent."
    assert "exp2" in a.tags
    store.add(a)

    async def ask2(prompt: str) -> str:
        return "Use tl.exp2 with a log2(e) factor for the softmax exponent!"

    b = asyncio.run(distill_llm(ask2, _m(0.10, "c6", changes=None, diff="x")))
    assert b is not None
    got, merged = merge_or_add(store, b)
    assert merged and got.id == a.id and len(got.provenance) == 2


def test_distill_run_keeps_only_gains_above_five_percent(store):
    async def ask(prompt: str) -> str:
        return "Load each row once and keep it in registers for both passes."

    out = asyncio.run(distill_run(store, [
        _m(0.12, "c2"), _m(0.04, "c3"), _m(0.05, "c4"),
        _m(0.3, "c8", changes=None, diff="..."),
    ], ask=ask))
    assert len(out) == 2 and len(store) == 2
    assert all(a.status == "proposed" and a.provenance for a in store.all())
    assert asyncio.run(distill_run(store, [_m(0.3, "c9", changes=None)], ask=None)) == []


@pytest.mark.parametrize("raw, want", [
    ("Increase num_warps to 8.", "Increase num_warps to 8."),
    ("**Advice:** Use vectorized loads for aligned rows. It helps because...",
     "Use vectorized loads for aligned rows."),
    ("Here is the advice:\n\n- \"Fuse the bias add into the epilogue\"", "Fuse the bias add into the epilogue."),
    ("<think>long\nthinking", None),
    ("```python\nx = 1\n```", None),
    ("", None),
])
def test_clean_sentence(raw, want):
    assert clean_sentence(raw) == want


def test_clean_sentence_caps_length():
    out = clean_sentence(" ".join(["word"] * 80))
    assert out is not None and len(out.split()) <= 40


def _adv(i: str, text: str, **kw) -> Advice:
    return Advice(id=i * 8, text=text, **kw)


def test_audit_findings_each_with_a_fix():
    items = [
        _adv("1", "Use num_warps 8 for rows.", tags=("num_warps",), gain=0.01),
        _adv("2", " ".join(["tile"] * 45) + ".", tags=("tiling",)),
        _adv("3", "Fuse the epilogue into the matmul kernel.", kind="gemm"),
        _adv("4", "Use persistent kernels for tiny rows.", tags=("persistent",),
             counters={"lib": [12, 0]}),
        _adv("5", "Fuse the bias add into the matmul epilogue kernel.", kind="gemm",
             tags=("fusion",)),
        _adv("6", "Fuse the bias add into the matmul epilogue kernel now.", kind="gemm",
             tags=("fusion",), status="accepted"),
        _adv("7", "Increase num_warps for softmax rows.", kind="softmax", tags=("num_warps",)),
        _adv("8", "num_warps 8→4: +6 % on softmax", kind="softmax", tags=("num_warps",)),
        _adv("9", "Vetoed advice is not audited", status="vetoed", gain=0.0),
    ]
    found = {(f.code, f.advice_id): f for f in audit(items)}
    assert ("weak_gain", "11111111") in found
    assert ("too_long", "22222222") in found
    assert ("no_tags", "33333333") in found
    assert "--tags" in found[("no_tags", "33333333")].fix
    assert ("never_helped", "44444444") in found
    dup = found[("duplicate", "55555555")]
    assert dup.other_id == "66666666" and dup.fix == "evotui advice merge 66666666 55555555"
    assert any(code == "contradiction" for code, _ in found)
    assert not any(i == "99999999" for _, i in found)
    assert all(f.fix.startswith("evotui advice ") for f in found.values())


def test_directions():
    assert directions("BLOCK_SIZE 1024→4096, num_warps 8→4") == {"block_size": 1, "num_warps": -1}
    assert directions("Raise num_stages to 3 to 5; lower it if shared memory runs out") == {
        "num_stages": 1}
    assert directions("use fewer warps and a smaller block size") == {"num_warps": -1,
                                                                     "block_size": -1}


def test_hook_distill_leaves_retrievable_proposed_advice(store):
    from evotui.memory.hook import MemoryHook
    from evotui.task.model import TaskMeta

    hook = MemoryHook(store, k=3, arch="NVIDIA H200")
    out = asyncio.run(hook.distill([_m(0.12, "c2"), _m(0.02, "c3")]))
    assert len(out) == 1 and out[0].status == "proposed"
    assert out[0].provenance[0].run == "run-1" and out[0].provenance[0].gpu == "NVIDIA H200"
    meta = TaskMeta(name="softmax", kind="softmax", tags=("reduction", "fp32"))
    assert [a.id for a in hook.retrieve(meta, "BLOCK_SIZE num_warps")] == [out[0].id]
