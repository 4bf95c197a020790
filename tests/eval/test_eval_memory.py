"""What an evaluation costs in GPU memory: the judge compares outputs a slice at a time
(the same verdict as a whole-tensor comparison), and the pool sizes the timed input sets
from the task's own footprint and the device's memory."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from evotui.eval.compare import compare_float, describe_worst
from evotui.eval.memory_plan import TimingSetPlanner, set_bytes
from evotui.task.model import resolve_task

KB = Path(__file__).parents[1] / "kernelbench_style"
GIB = 2**30


def _whole_tensor_verdict(got, ref, atol, rtol):
    g, r = got.double(), ref.double()
    diff = (g - r).abs()
    excess = diff - (atol + rtol * r.abs())
    over = excess > 0
    top = torch.topk(torch.where(over, excess, -1.0).flatten(), 3).indices.tolist()
    return float(diff.max()), int(over.sum()), [i for i in top if over.flatten()[i]]


@pytest.mark.parametrize("chunk", [7, 64, 1 << 24])
def test_a_sliced_comparison_finds_what_a_whole_tensor_comparison_finds(chunk):
    gen = torch.Generator().manual_seed(3)
    ref = torch.randn(37, 29, generator=gen)
    got = ref + 1e-7 * torch.randn(37, 29, generator=gen)
    for (i, j), err in {(0, 0): 0.5, (11, 3): 2.0, (36, 28): 1.0, (20, 7): 0.01}.items():
        got[i, j] += err
    max_abs, beyond, worst = _whole_tensor_verdict(got, ref, 1e-4, 1e-4)

    c = compare_float(torch, got, ref, 1e-4, 1e-4, chunk=chunk)
    assert (c.elements, c.beyond, c.nonfinite) == (37 * 29, beyond, 0)
    assert c.max_abs_err == pytest.approx(max_abs)
    assert [i for _, i in c.worst] == worst == [11 * 29 + 3, 36 * 29 + 28, 0]
    assert describe_worst(got, ref, c.worst).startswith("[11, 3] got ")


def test_a_sliced_comparison_counts_nan_and_never_written_elements():
    ref = torch.zeros(100)
    got = ref.clone()
    got[3] = float("nan")
    got.view(torch.int32)[50:60] = -1  # the poison an unwritten output keeps (a NaN)
    c = compare_float(torch, got, ref, 1e-4, 1e-4, chunk=16)
    assert (c.nonfinite, c.unwritten) == (11, 10)


def test_a_correct_output_has_no_bad_elements_in_any_slice():
    ref = torch.randn(1000)
    c = compare_float(torch, ref.clone(), ref, 0.0, 0.0, chunk=33)
    assert (c.beyond, c.nonfinite, c.max_abs_err, c.worst) == (0, 0, 0.0, [])


def test_one_timed_set_counts_its_inputs_and_outputs_from_the_meta_device():
    task = resolve_task(KB / "02_LeakyReLU_slope.py")
    assert set_bytes(task, {}) == 2 * 2048 * 65536 * 4  # no memory is allocated to find out
    assert set_bytes(task, {"dim": 1024}) == 2 * 2048 * 1024 * 4


def test_the_pool_times_fewer_sets_of_a_big_task_and_asks_each_device_once():
    task = resolve_task(KB / "02_LeakyReLU_slope.py")  # 1 GB a set
    asked: list[str] = []

    def memory_of(device: str) -> int:
        asked.append(device)
        return 24 * GIB

    planner = TimingSetPlanner(12, 1, memory_of)
    assert planner.count(task, {}, "cuda:0") == 3  # 8 % of 24 GB holds one, a quarter 6: 3
    assert planner.count(task, {"dim": 262144}, "cuda:0") == 1  # 4 GB sets
    assert planner.count(task, {"dim": 16384}, "cuda:0") == 7  # 256 MB sets
    assert planner.count(task, {}, "cpu") == 1
    shared = TimingSetPlanner(12, 2, memory_of)  # two candidates share each GPU
    assert shared.count(task, {"dim": 16384}, "cuda:1") == 3
    assert asked == ["cuda:0", "cuda:1"]


def test_an_unknown_memory_keeps_every_set_asked_for():
    task = resolve_task(KB / "02_LeakyReLU_slope.py")
    assert TimingSetPlanner(12, 1, lambda device: None).count(task, {}, "cuda:0") == 12


def test_a_task_with_big_outputs_runs_fewer_trials_to_fit_the_host():
    """Each output a candidate hands over is host memory until the judge reads it: a task
    whose outputs crowd the host's share runs fewer trials, never fewer than one per shape,
    and reserves what it may hand over (its candidates then take turns, not the small ones)."""
    from evotui.eval.memory_plan import handover_limit, plan_handover

    host = handover_limit(1, 128 * GIB)  # one GPU of a 128 GB host: 64 GB
    small = plan_handover(256 << 20, 5, 1, host)  # a 256 MB softmax output
    assert small.trials == 5 and small.fits
    assert small.limit_bytes < host // 3  # three candidates' outputs fit side by side
    rms = plan_handover(7 * GIB, 5, 1, host)  # 36_RMSNorm: 7 GB a call, one shape
    assert rms.trials == 64 // 7 - 6 == 3 and rms.fits
    assert rms.limit_bytes == host  # all of it: its candidates take turns
    two_shapes = plan_handover(20 * GIB, 5, 2, host)
    assert two_shapes.trials == 2 and not two_shapes.fits  # refused before it runs
    unknown = plan_handover(None, 5, 1, host)  # outputs not known exactly: all, in turn
    assert unknown.trials == 5 and unknown.limit_bytes == host


def test_the_pool_plans_trials_from_the_tasks_exact_outputs():
    task = resolve_task(KB / "02_LeakyReLU_slope.py")  # 2048 x 65536 fp32: 512 MiB out
    planner = TimingSetPlanner(12, 1, lambda device: 80 * GIB, 4 * GIB)
    plan = planner.handover(task, {}, "cuda:0", 5, 1)
    assert plan.trials == 4 * GIB // (512 << 20) - 6 == 2
    assert planner.handover(task, {}, "cpu", 5, 1).trials == 1  # inputs handed over too
