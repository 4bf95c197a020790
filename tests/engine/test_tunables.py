"""Tunables: finding, rewriting in place, config keys, and the param mutator."""

import ast
import math
import random
from pathlib import Path

import pytest

from evotui.engine.param_mutator import ParamMutation, ParamMutator
from evotui.engine.tunables import config_key, find_tunables, set_tunables

SEED = Path(__file__).resolve().parents[2] / "sample_kernels" / "softmax" / "seed.py"

SOURCE = '''"""A matmul-ish candidate."""
import triton

BLOCK_M = 64  # rows per program
BLOCK_N: int = 128
GROUP_SIZE_M = 8
NUM_STAGES = 3
EPS = 1
block_k = 32
NUM_WARPS = 4
TUNABLES = {"NUM_WARPS": [2, 4, 8], "MISSING": [1, 2]}


def launch(a, grid):
    kern[grid](a, BLOCK=BLOCK_M, num_warps=4, num_stages=2)   # literal launch options
    kern[grid](a, num_warps=NUM_WARPS)
    self.other[(1,)](a, num_stages=1)
'''


def by_name(source):
    return {t.name: t for t in find_tunables(source)}


def test_softmax_seed_declares_its_knobs():
    found = by_name(SEED.read_text())
    assert set(found) == {"NUM_WARPS", "ROWS_PER_PROGRAM", "NUM_STAGES"}
    assert {n: t.value for n, t in found.items()} == {
        "NUM_WARPS": 8, "ROWS_PER_PROGRAM": 1, "NUM_STAGES": 1}
    assert found["NUM_WARPS"].choices == (1, 2, 4, 8, 16, 32)
    assert found["ROWS_PER_PROGRAM"].choices == (1, 2, 4, 8, 16)
    assert found["NUM_STAGES"].choices == (1, 2, 3, 4)


@pytest.mark.parametrize("name", ["add_gelu", "cross_entropy", "layernorm", "rmsnorm",
                                  "rmsnorm_fp16", "rmsnorm_wide", "row_sum", "softmax"])
def test_sample_seeds_have_room_for_a_64_evaluation_search(name):
    """A param run evaluates 64 candidates per sample: each Triton seed's declared space holds
    more than that, and its defaults (the naive seed itself) are among the choices."""
    source = (SEED.parents[1] / name / "seed.py").read_text()
    found = find_tunables(source)
    assert all(t.value in t.choices for t in found)
    assert math.prod(len(t.choices) for t in found) >= 64
    assert {"NUM_WARPS", "NUM_STAGES"} <= {t.name for t in found}


def test_declared_discovered_and_launch_tunables():
    found = by_name(SOURCE)
    assert found["NUM_WARPS"].choices == (2, 4, 8)  # declared wins
    assert found["BLOCK_M"].value == 64 and found["BLOCK_N"].value == 128
    assert found["GROUP_SIZE_M"].value == 8 and found["NUM_STAGES"].value == 3
    assert "EPS" not in found and "block_k" not in found and "MISSING" not in found
    launch = {n: t for n, t in found.items() if n.startswith("launch:")}
    assert launch["launch:kern:num_warps"].value == 4
    assert launch["launch:kern:num_stages"].value == 2
    assert launch["launch:other:num_stages"].value == 1
    # num_warps=NUM_WARPS is a name, not a literal: not a launch tunable
    assert not any(n.startswith("launch:kern#2") for n in launch)


def test_discovered_choices_are_sensible():
    found = by_name(SOURCE)
    for t in found.values():
        assert t.value in t.choices
        assert list(t.choices) == sorted(set(t.choices))
    warps = found["launch:kern:num_warps"].choices
    assert set(warps) <= {1, 2, 4, 8, 16, 32} and {2, 8} <= set(warps)
    assert set(found["NUM_STAGES"].choices) <= set(range(1, 7))
    assert len(found["NUM_STAGES"].choices) > 2
    for name in ("BLOCK_M", "BLOCK_N"):
        choices = found[name].choices
        assert all(16 <= c <= 65536 and c & (c - 1) == 0 for c in choices)
        assert found[name].value * 2 in choices and found[name].value // 2 in choices


def test_second_launch_of_same_kernel_is_named_apart():
    src = "def f(g):\n    k[g](num_warps=4)\n    k[g](num_warps=8)\n"
    found = by_name(src)
    assert len([n for n in found if n.startswith("launch:k") and n.endswith(":num_warps")]) == 2
    assert sorted(t.value for t in found.values()) == [4, 8]


def test_declared_on_off_knob_may_be_zero():
    src = 'ONE_PASS = 0\nBLOCK_SIZE = 0\nTUNABLES = {"ONE_PASS": [0, 1], "NUM_WARPS": [0, 4]}\n'
    found = by_name(src)
    assert set(found) == {"ONE_PASS"}  # an undeclared 0 is no tunable
    assert found["ONE_PASS"].value == 0 and found["ONE_PASS"].choices == (0, 1)
    on = set_tunables(src, {"ONE_PASS": 1})
    assert on.startswith("ONE_PASS = 1\n") and by_name(on)["ONE_PASS"].value == 1
    m = ParamMutator().mutate(src, random.Random(0))
    assert m is not None and m.changes == {"ONE_PASS": (0, 1)}


def test_rebound_constant_is_not_tunable():
    src = "BLOCK = 64\nBLOCK = BLOCK * 2\nTILE = 32\n"
    assert set(by_name(src)) == {"TILE"}


def test_set_tunables_edits_only_the_literals():
    new = set_tunables(SOURCE, {"BLOCK_M": 256, "NUM_WARPS": 8, "launch:kern:num_warps": 16})
    expected = (
        SOURCE.replace("BLOCK_M = 64  #", "BLOCK_M = 256  #")
        .replace("NUM_WARPS = 4\n", "NUM_WARPS = 8\n")
        .replace("num_warps=4, num_stages=2)", "num_warps=16, num_stages=2)")
    )
    assert new == expected
    ast.parse(new)
    found = by_name(new)
    assert found["BLOCK_M"].value == 256 and found["NUM_WARPS"].value == 8
    assert found["launch:kern:num_warps"].value == 16
    assert found["BLOCK_N"].value == 128  # untouched


def test_set_tunables_with_unicode_and_crlf():
    src = 'NAME = "héllo"; BLOCK = 64  # ünïcode\r\nWARPS_X = 4\r\n'
    new = set_tunables(src, {"BLOCK": 1024, "WARPS_X": 2})
    assert new == 'NAME = "héllo"; BLOCK = 1024  # ünïcode\r\nWARPS_X = 2\r\n'


def test_set_tunables_rejects_unknown_names():
    with pytest.raises(KeyError):
        set_tunables(SOURCE, {"NOPE": 3})


def test_config_key_ignores_formatting_but_not_values():
    a = "BLOCK = 1024\n\ndef f():\n    return BLOCK\n"
    b = "BLOCK = 1_024  # same\n\n\ndef f():\n    return (BLOCK)\n"
    c = "BLOCK = 2048\n\ndef f():\n    return BLOCK\n"
    assert config_key(a) == config_key(a.replace("\n\n", "\n\n\n")) == config_key(a + "# x\n")
    assert config_key(a) == config_key(b.replace("(BLOCK)", "BLOCK"))
    assert config_key(a) != config_key(c)
    assert config_key("def (") == config_key("def (")  # unparsable sources still hash


def test_mutation_is_deterministic_and_respects_declared_choices():
    seed = SEED.read_text()
    runs = []
    for _ in range(2):
        rng = random.Random(1234)
        runs.append([ParamMutator().mutate(seed, rng) for _ in range(20)])
    assert runs[0] == runs[1]
    declared = by_name(seed)
    for m in runs[0]:
        assert isinstance(m, ParamMutation)
        assert 1 <= len(m.changes) <= 2
        expected = seed
        for name, (old, new) in m.changes.items():
            assert old == declared[name].value and new in declared[name].choices and new != old
            expected = expected.replace(f"\n{name} = {old}\n", f"\n{name} = {new}\n")
        assert m.description == ", ".join(f"{n} {o}→{v}" for n, (o, v) in m.changes.items())
        assert m.source == expected


def test_mutation_changes_between_one_and_max_changes():
    rng = random.Random(7)
    mutator = ParamMutator(max_changes=2)
    sizes = set()
    before = by_name(SOURCE)
    for _ in range(100):
        m = mutator.mutate(SOURCE, rng)
        assert m is not None
        assert 1 <= len(m.changes) <= 2
        sizes.add(len(m.changes))
        after = by_name(m.source)
        for name, t in before.items():
            if name in m.changes:
                assert (
                    m.changes[name] == (t.value, after[name].value) and t.value != after[name].value
                )
                assert after[name].value in t.choices
            else:
                assert after[name].value == t.value
    assert sizes == {1, 2}


def test_mutation_mostly_steps_to_a_neighbour():
    src = 'TUNABLES = {"X": [1, 2, 3, 4, 5, 6, 7, 8, 9]}\nX = 5\n'
    rng = random.Random(0)
    steps = [ParamMutator(max_changes=1).mutate(src, rng).changes["X"][1] for _ in range(400)]
    near = sum(v in (4, 6) for v in steps)
    assert near > 0.6 * len(steps)
    assert any(v not in (4, 6) for v in steps)  # sometimes jumps


def test_mutation_avoids_tried_and_reports_exhaustion():
    src = 'TUNABLES = {"X": [1, 2, 3], "Y": [1, 2]}\nX = 1\nY = 1\n'
    rng = random.Random(3)
    mutator = ParamMutator(max_changes=2)
    tried = {config_key(src)}
    seen = []
    while (m := mutator.mutate(src, rng, tried)) is not None:
        key = config_key(m.source)
        assert key not in tried
        tried.add(key)
        seen.append((by_name(m.source)["X"].value, by_name(m.source)["Y"].value))
        assert len(seen) <= 5
    assert sorted(seen) == [(1, 2), (2, 1), (2, 2), (3, 1), (3, 2)]


def test_mutation_finds_the_last_untried_config():
    src = 'TUNABLES = {"X": [1, 2, 3, 4, 5, 6, 7, 8]}\nX = 1\n'
    tried = {config_key(set_tunables(src, {"X": v})) for v in range(1, 8)}
    m = ParamMutator().mutate(src, random.Random(0), tried)
    assert m is not None and m.changes == {"X": (1, 8)}


def test_mutation_without_tunables_or_parse_returns_none():
    rng = random.Random(0)
    assert ParamMutator().mutate("x = 1\n", rng) is None
    assert ParamMutator().mutate("def (:\n", rng) is None
    assert ParamMutator().mutate('TUNABLES = {"X": [4]}\nX = 4\n', rng) is None
