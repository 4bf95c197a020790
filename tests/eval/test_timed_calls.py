"""What happens between two timed calls (evotui.eval.timed_calls), on the CPU."""

from __future__ import annotations

import torch

from evotui.eval.perturb import values_seed, write_quietly
from evotui.eval.timed_calls import TimedCalls
from evotui.task.model import load_module, make_inputs
from tests.conftest import SAMPLES

SHAPE = {"batch_size": 16, "dim": 512}


def test_every_value_of_the_next_set_changes_and_no_version_counter_moves():
    """With one element changed per call, a GEMM recomputed only the row
    blocks that changed. Now each timed call's set holds entirely new values, those the
    judge regenerates from (seed, changes), written without moving `_version`."""
    task = load_module(SAMPLES / "softmax" / "task.py", "evotui_task")
    seeds = [11, 12, 13]
    sets = [make_inputs(task, SHAPE, s) for s in seeds]
    calls = TimedCalls(lambda x: x * 2, sets, seeds, judge_every_call=True, audit_seed=1,
                       dump=lambda values, prefix: [],
                       refill=lambda values, s: write_quietly(values, make_inputs(task, SHAPE, s)))
    before = [t.clone() for t in sets[0]]
    calls.prepare()
    (x,) = sets[0]
    assert x._version == 0
    assert (x != before[0]).float().mean() > 0.99  # all values new
    assert torch.equal(x, make_inputs(task, SHAPE, values_seed(seeds[0], calls.perturbed[0]))[0])
    calls.call()
    calls.prepare()  # the next set, and the released output is judged (CPU: every call)
    assert calls.perturbed == [1, 1, 0] and len(calls.earlier) == 1
    assert calls.earlier[0].seed == seeds[0] and calls.earlier[0].perturbed == 1
