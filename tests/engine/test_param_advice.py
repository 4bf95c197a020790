"""Advice the parameter mutator can follow: hints from templates, hand-written tunables and
text; following them by name or by family; only what tunables changed; old files load."""

from __future__ import annotations

import asyncio
import json
import random

from evotui.engine.mutators import MutationRequest, ParamMutatorAdapter
from evotui.engine.param_mutator import ParamMutator
from evotui.engine.population import Candidate
from evotui.engine.prompting import PromptContext
from evotui.engine.tunables import config_key, find_tunables, tunable_diff
from evotui.memory import Advice, AdviceStore
from evotui.memory.suggest import TunableHint, tunable_hints
from tests.engine_helpers import SOFTMAX_SEED

KERNEL = """
BLOCK_SIZE = 1024
TUNABLES = {"BLOCK_SIZE": [256, 512, 1024, 2048, 4096]}

def forward(x):
    k[(1,)](x, BLOCK=BLOCK_SIZE, num_warps=4)
"""


def values(source: str) -> dict[str, int]:
    return {t.name: t.value for t in find_tunables(source)}


def test_hints_from_template_tunables_and_text():
    templ = Advice("a1b2c3d4", "x", conditions={"template": {"changes": {"NUM_WARPS": [8, 4]}}})
    assert tunable_hints(templ) == (TunableHint("NUM_WARPS", 4, 8),)
    authored = {"id": "b", "text": "Rows this long like more warps.",
                "conditions": {"tunables": {"num_warps": 16, "BLOCK_SIZE": [1024, 4096]}}}
    assert tunable_hints(authored) == (TunableHint("num_warps", 16), TunableHint("BLOCK_SIZE", 4096, 1024))
    text = {"text": "BLOCK_SIZE 1024 -> 4096 and num_stages from 2 to 3 helped; tile 4→8 no."}
    assert [(h.base, h.old, h.new, h.direction) for h in tunable_hints(text)] == [
        ("block_size", 1024, 4096, 1), ("num_stages", 2, 3, 1)]
    assert tunable_hints({"text": "Use vectorized 128-bit loads."}) == ()
    # on/off knobs move to and from 0
    assert tunable_hints({"text": "ONE_PASS 0→1 helped"}) == (TunableHint("ONE_PASS", 1, 0),)
    off = Advice("c", "x", conditions={"template": {"changes": {"ONE_PASS": [1, 0]}}})
    assert tunable_hints(off) == (TunableHint("ONE_PASS", 0, 1),)


def test_follow_by_exact_name_then_by_family_and_direction():
    pm = ParamMutator()
    got = pm.follow(KERNEL, [TunableHint("BLOCK_SIZE", 4096, 1024)])
    assert got is not None and values(got.source)["BLOCK_SIZE"] == 4096
    assert got.changes == {"BLOCK_SIZE": (1024, 4096)}
    # another kernel's launch keyword: matched by its last part
    got = pm.follow(KERNEL, [TunableHint("launch:other_kernel:num_warps", 8, 4)])
    assert got is not None and values(got.source)["launch:k:num_warps"] == 8
    # not a choice: one step towards it
    got = pm.follow(KERNEL, [TunableHint("block_size", 3000, 1024)])
    assert got is not None and values(got.source)["BLOCK_SIZE"] == 2048
    # already there, already past it in the advised direction, unknown name: nothing
    assert pm.follow(KERNEL, [TunableHint("BLOCK_SIZE", 1024, 512)]) is None
    assert pm.follow(KERNEL, [TunableHint("BLOCK_SIZE", 512, 256)]) is None
    assert pm.follow(KERNEL, [TunableHint("GROUP_M", 8, 4)]) is None
    # a bare value may go either way; a tried child is not proposed again
    got = pm.follow(KERNEL, [TunableHint("BLOCK_SIZE", 512)])
    assert got is not None and values(got.source)["BLOCK_SIZE"] == 512
    assert pm.follow(KERNEL, [TunableHint("BLOCK_SIZE", 512)], {config_key(got.source)}) is None


def test_adapter_follows_sometimes_and_says_which_advice():
    parent = Candidate(id="c1", source=SOFTMAX_SEED, status="accepted")
    prose = Advice("0000aaaa", "Keep rows in registers.")
    moves = Advice("1111bbbb", "NUM_WARPS 8→4: +10 % on softmax",
                   conditions={"template": {"changes": {"NUM_WARPS": [8, 4]}}})
    adapter = ParamMutatorAdapter()
    outs = []
    for seed in range(40):
        req = MutationRequest("c2", parent, PromptContext("", parent), random.Random(seed),
                              frozenset(), (prose, moves))
        outs.append(asyncio.run(adapter.propose(req)))
    followed = [m for m in outs if m.advice_ids]
    assert all(m.ok for m in outs)
    assert 10 <= len(followed) <= 30  # a reference, not an order: it keeps exploring
    assert all(m.advice_ids == ("1111bbbb",) and "NUM_WARPS 8→4" in m.description
               for m in followed)
    assert all(m.advice_ids == () for m in outs if m not in followed)
    # no advice: exactly the memory-off behaviour
    plain = [asyncio.run(adapter.propose(MutationRequest(
        "c2", parent, PromptContext("", parent), random.Random(s)))) for s in range(5)]
    assert all(m.advice_ids == () for m in plain)


def test_tunable_diff_only_for_tunable_changes():
    child = KERNEL.replace("BLOCK_SIZE = 1024", "BLOCK_SIZE = 4096").replace("num_warps=4",
                                                                             "num_warps=8")
    assert tunable_diff(KERNEL, child) == {"BLOCK_SIZE": (1024, 4096),
                                           "launch:k:num_warps": (4, 8)}
    assert tunable_diff(KERNEL, child + "# a comment\n") is not None
    assert tunable_diff(KERNEL, child.replace("forward(x)", "forward(x, y)")) is None
    assert tunable_diff(KERNEL, KERNEL) is None
    assert tunable_diff(KERNEL, "def broken(:") is None


def test_old_library_files_still_load(tmp_path):
    """A document written before provenance had kind/shape/dtype/arch/interpreter."""
    old = {"id": "0123abcd", "text": "NUM_WARPS 4→8: +12 % on softmax 8192×8192 fp32, H200",
           "kind": "softmax", "tags": ["softmax"], "status": "proposed",
           "conditions": {"template": {"changes": {"NUM_WARPS": [4, 8]}, "task": "softmax"}},
           "provenance": [{"source": "distilled", "run": "r", "parent": "c1", "child": "c2",
                           "gpu": "NVIDIA H200", "gain": 0.12, "date": "2026-11-01T00:00:00Z"}]}
    path = tmp_path / "advice.json"
    path.write_text(json.dumps({"advice": {old["id"]: old}}))
    store = AdviceStore(path, cold_start=False)
    a = store.get("0123abcd")
    assert a.provenance[0].interpreter is None and a.provenance[0].gpu == "NVIDIA H200"
    assert tunable_hints(a) == (TunableHint("NUM_WARPS", 8, 4),)
    assert a.to_doc()["provenance"][0] == old["provenance"][0]


def test_cold_start_advice_moves_the_sample_seeds_where_it_says(tmp_path):
    """The pack's structured moves reach the parameter mutator: a Hopper GEMM tile for the
    matmul seed, the one-pass row kernel for the normalisation and cross-entropy seeds."""
    from evotui.memory.hook import MemoryHook
    from evotui.task.model import resolve_task
    from tests.conftest import SAMPLES

    hook = MemoryHook(AdviceStore(tmp_path / "advice.json"), k=3, arch="NVIDIA H200")
    expected = {"matmul_bias_relu": {"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 64,
                                     "NUM_WARPS": 8, "NUM_STAGES": 3},
                "rmsnorm": {"ONE_PASS": 1}, "layernorm": {"ONE_PASS": 1},
                "cross_entropy": {"ONE_PASS": 1}}
    for name, moves in expected.items():
        task = resolve_task(SAMPLES / name)
        seed = task.seed_path.read_text()
        shown = hook.retrieve(task.meta, seed)
        hints = [h for a in shown for h in tunable_hints(a)]
        assert hints, f"{name}: none of {[a.text[:60] for a in shown]} carries a move"
        child = ParamMutator().follow(seed, hints)
        assert child is not None, name
        got = values(child.source)
        assert {k: got[k] for k in moves} == moves, (name, child.description)
