"""Export / import: sharing a library keeps provenance and never repeats advice."""

from __future__ import annotations

import json

from evotui.memory import AdviceStore, Provenance


def _library_state(store: AdviceStore) -> dict[str, dict]:
    return {a.id: a.to_doc() for a in store.all()}


def _populated(path) -> AdviceStore:
    store = AdviceStore(path)
    a = store.new("Use num_warps 8 for 8192-wide rows", kind="softmax", tags=["num_warps"])
    b = store.new("BLOCK_SIZE 1024→4096: +12 % on softmax", kind="softmax", status="proposed",
                  source="distilled", gain=0.12,
                  provenance=(Provenance(source="distilled", run="r1", parent="c3", child="c7",
                                         gpu="NVIDIA H200", gain=0.12),))
    store.accept(b.id)
    cold = store.all()[0]
    store.veto(cold.id)
    store.record_outcome([a.id, b.id], True)
    store.record_outcome([b.id], False)
    return store


def test_export_then_import_into_an_empty_home_gives_the_same_library(tmp_path):
    src = _populated(tmp_path / "one" / "advice.json")
    exported = json.loads(json.dumps(src.export_data()))
    dst = AdviceStore(tmp_path / "two" / "advice.json")  # an empty home: cold-start pack
    result = dst.import_data(exported)
    assert _library_state(dst) == _library_state(src)
    assert len(result.added) == 2  # the cold-start pack was already there, merged
    assert dst.get(src.all()[0].id).status == "vetoed"


def test_importing_twice_adds_nothing(tmp_path):
    src = _populated(tmp_path / "one" / "advice.json")
    data = src.export_data()
    dst = AdviceStore(tmp_path / "two" / "advice.json")
    dst.new("Local advice of the second library")
    dst.import_data(data)
    state = _library_state(dst)
    gen = dst.storage.gen
    again = dst.import_data(data)
    assert not again.added and not again.merged and again.unchanged == len(data["advice"])
    assert _library_state(dst) == state
    assert dst.storage.gen == gen  # not even rewritten


def test_import_merges_counters_and_provenance_without_double_counting(tmp_path):
    one = _populated(tmp_path / "one" / "advice.json")
    two = AdviceStore(tmp_path / "two" / "advice.json")
    two.import_data(one.export_data())
    shared = [a for a in two.all() if a.gain == 0.12][0]
    two.record_outcome([shared.id], True)  # the second library uses it too
    one.import_data(two.export_data())
    one.import_data(two.export_data())
    got = one.get(shared.id)
    assert got.shown == 3 and got.improved == 2  # 2 showings in one + 1 in two, once each
    assert len(got.provenance) == 1


def test_same_text_under_another_id_is_merged(tmp_path):
    one = AdviceStore(tmp_path / "one" / "advice.json", cold_start=False)
    two = AdviceStore(tmp_path / "two" / "advice.json", cold_start=False)
    a = one.new("Fuse the bias add into the matmul epilogue", kind="gemm", tags=["epilogue"])
    b = two.new("fuse the bias add into the matmul epilogue.", kind="gemm", tags=["fusion"])
    assert a.id != b.id
    r = one.import_data(two.export_data())
    assert r.merged == [a.id] and len(one) == 1
    assert set(one.get(a.id).tags) == {"epilogue", "fusion"}


def test_plain_list_import_is_idempotent(tmp_path):
    store = AdviceStore(tmp_path / "advice.json", cold_start=False)
    items = [{"text": "Prefer tl.exp2 with a log2(e) factor", "tags": ["exp2"]},
             "Keep BLOCK_K a multiple of 32"]
    first = store.import_data(items)
    assert len(first.added) == 2
    assert {a.source for a in store.all()} == {"imported"}
    second = store.import_data(items)
    assert not second.added and not second.merged and len(store) == 2
