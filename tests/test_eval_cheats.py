"""Every cheat class that can run on the CPU, with candidates that really cheat, and honest
but unusual candidates that must pass. All go through one shared pool (Triton interpreter)."""

from __future__ import annotations

import pytest

from evotui.eval import EvalRequest
from tests.conftest import CANDIDATES

SOFTMAX = CANDIDATES / "softmax"


def evaluate(pool, task, name: str, **kw):
    source = (SOFTMAX / name).read_text()
    return pool.evaluate(EvalRequest(task=task, source=source, name=name, **kw))


@pytest.mark.parametrize("name", ["honest_two_kernels.py", "honest_autotune.py",
                                  "honest_heuristics_hooks.py"])
def test_honest_unusual_candidates_are_accepted(cpu_pool, softmax_task, name):
    result = evaluate(cpu_pool, softmax_task, name)
    assert result.accepted, (result.reason, result.message)
    assert result.interpreter and result.speedup_eager is None  # never a speedup on the CPU


@pytest.mark.parametrize(("name", "reasons"), [
    ("cheat_torch_fallback.py", {"torch_fallback"}),
    ("cheat_python_compute.py", {"kernels_not_used"}),
    ("cheat_no_kernel.py", {"no_kernel"}),
    ("cheat_shape_cache.py", {"mismatch"}),
    ("cheat_identity_cache.py", {"mismatch", "stale_output"}),
    ("cheat_replay_after_checks.py", {"stale_output"}),
    ("cheat_stale_memory.py", {"unwritten_output"}),  # its allocations are poisoned
    ("cheat_skip_last_row.py", {"unwritten_output"}),
    ("cheat_modify_inputs.py", {"modified_inputs"}),
    ("cheat_parameter_output.py", {"not_a_tensor"}),
    ("cheat_meta_output.py", {"not_a_tensor"}),
    ("cheat_grid_callback.py", {"torch_fallback"}),
    ("cheat_probe_checked_calls.py", {"stale_output"}),
    ("cheat_downcast.py", {"mismatch"}),
    ("cheat_shape_specialised.py", {"mismatch", "runtime_error", "crashed"}),
    ("cheat_wrong.py", {"mismatch"}),
])
def test_runtime_cheats_are_rejected_with_their_reason(cpu_pool, softmax_task, name, reasons):
    result = evaluate(cpu_pool, softmax_task, name)
    assert not result.accepted
    assert result.reason in reasons, (result.reason, result.message)
    assert result.message


@pytest.mark.parametrize(("name", "reason"), [
    ("cheat_side_stream.py", "forbidden_attribute"),
    ("cheat_thread.py", "forbidden_import"),
    ("cheat_patch_timer.py", "forbidden_construct"),
    ("cheat_slow_baseline.py", "forbidden_construct"),
    ("cheat_try_fallback.py", "forbidden_construct"),
    ("cheat_inspect.py", "forbidden_import"),
    ("cheat_tensor_subclass.py", "forbidden_construct"),
    ("cheat_dynamic_import.py", "forbidden_call"),
    ("fault_syntax.py", "syntax_error"),
])
def test_static_rules_reject_before_anything_runs(cpu_pool, softmax_task, name, reason):
    result = evaluate(cpu_pool, softmax_task, name)
    assert (result.accepted, result.reason) == (False, reason), result.message
    assert result.wall_s < 1.0  # no worker was involved


def test_threads_left_running_are_caught_at_runtime(raw_cpu_pool, softmax_task):
    result = evaluate(raw_cpu_pool, softmax_task, "fault_spawn_thread.py")
    assert result.reason == "threads_spawned"


def test_uninitialised_allocations_in_checked_calls_are_poisoned():
    import torch

    from evotui.eval.op_policy import OpPolicy

    with OpPolicy(poison=True) as policy:
        a = torch.empty(4, 3)
        b = torch.empty_like(a, dtype=torch.bfloat16)
        s = torch.empty_strided((3, 2), (1, 3), dtype=torch.float16)
        z = torch.zeros(5)
        r = torch.ones(2)
        r.resize_(1000)  # keeps its first two elements, the rest is new memory
    assert r[:2].eq(1).all() and torch.isnan(r[2:]).all()
    assert torch.isnan(a).all() and torch.isnan(b.float()).all() and torch.isnan(s.float()).all()
    assert a.view(torch.int32).eq(-1).all() and b.view(torch.int16).eq(-1).all()  # 0xFF bytes
    assert z.eq(0).all() and not policy.violations  # allocation is allowed, zeros stay zeros
