"""The CUDA C dialect on a GPU (run by scripts/gpu-check.sh on the lent H200): the CUDA seeds
are accepted with speedups, the faults are rejected with named reasons and the next candidate
still evaluates, compute-sanitizer (where installed) flags memory errors, and a parameter
search improves on a CUDA seed."""

from __future__ import annotations

import asyncio
import io
import json

import pytest
from rich.console import Console

from evotui.dialects.cuda import compiler, sanitizer
from evotui.eval import EvalRequest
from tests.conftest import CANDIDATES, SAMPLES
from tests.cuda_faults import CHECKED, GPU_ONLY

NVRTC, WHY = compiler.available()
pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not NVRTC, reason=f"NVRTC unavailable: {WHY}")]
CUDA = CANDIDATES / "cuda"  # honest variants; the faults are the seed plus a change
SEEDS = {"softmax": "softmax_rows", "rmsnorm": "rmsnorm_rows"}


def task(name: str):
    from evotui.task.model import resolve_task

    return resolve_task(SAMPLES / name)


def evaluate(pool, task_name: str, source: str):
    return pool.evaluate(EvalRequest(task=task(task_name), source=source))


@pytest.mark.parametrize("name", sorted(SEEDS))
def test_cuda_seeds_are_accepted_with_speedups(gpu_pool, name):
    result = evaluate(gpu_pool, name, (SAMPLES / name / "seed_cuda.py").read_text())
    assert result.accepted, (result.reason, result.message)
    assert not result.interpreter and result.time_ms > 0
    assert result.speedup_eager and result.speedup_eager > 0
    assert result.speedup_compile and result.speedup_compile > 0
    assert result.roofline_pct and 1 < result.roofline_pct < 105
    assert set(result.launches) == {SEEDS[name]}
    print(f"\n{name} CUDA seed: {result.time_ms * 1000:.1f} µs, {result.speedup_eager:.2f}× eager, "
          f"{result.speedup_compile:.2f}× torch.compile, {result.roofline_pct:.0f} % of roofline "
          f"({result.timing_method})")


@pytest.mark.parametrize(("task_name", "file"), [
    ("softmax", "honest_two_kernels.py"), ("softmax", "honest_dynamic_smem.py"),
    ("rmsnorm", "honest_rmsnorm_bf16_header.py"),
])
def test_honest_variants_are_accepted(gpu_pool, task_name, file):
    result = evaluate(gpu_pool, task_name, (CUDA / file).read_text())
    assert result.accepted, (result.reason, result.message)


def test_out_of_bounds_write_is_rejected_by_the_guard_bands(gpu_pool, raw_gpu_pool):
    for pool in (gpu_pool, raw_gpu_pool):  # the guard bands need no static rules
        result = evaluate(pool, "softmax", CHECKED["fault_oob_write"])
        assert result.reason == "out_of_bounds", (result.reason, result.message)
        assert "after `y`" in result.message


def test_illegal_address_costs_one_worker_and_the_next_candidate_runs(gpu_pool):
    result = evaluate(gpu_pool, "softmax", CHECKED["fault_illegal_address"])
    assert result.reason in {"cuda_error", "crashed"}, (result.reason, result.message)
    ok = evaluate(gpu_pool, "softmax", (SAMPLES / "softmax" / "seed_cuda.py").read_text())
    assert ok.accepted, (ok.reason, ok.message)


def test_compile_errors_and_unwritten_outputs(gpu_pool):
    broken = (SAMPLES / "softmax" / "seed_cuda.py").read_text().replace("* inv;", "* inverse;")
    assert evaluate(gpu_pool, "softmax", broken).reason == "compile_error"
    result = evaluate(gpu_pool, "softmax", CHECKED["fault_no_write"])
    assert result.reason == "unwritten_output", (result.reason, result.message)


def test_device_state_cheat_is_refused_statically_and_fails_at_runtime(gpu_pool, raw_gpu_pool):
    source = CHECKED["cheat_device_counter"]
    assert evaluate(gpu_pool, "softmax", source).reason == "forbidden_construct"
    result = evaluate(raw_gpu_pool, "softmax", source)
    assert not result.accepted
    assert result.reason in {"stale_output", "mismatch", "unwritten_output"}, result.message



@pytest.mark.skipif(sanitizer.find() is None, reason="compute-sanitizer is not installed")
def test_a_counter_past_the_output_is_flagged_by_the_sanitizer(gpu_pool):
    """Bytes past an output are other memory (the harness's guard band in the trials, another
    block or nothing while timing): the evaluation cannot see the read, `evotui bench` and
    the engine run compute-sanitizer on it (every buffer its own allocation there)."""
    source = GPU_ONLY["cheat_counter_past_output"]
    report = gpu_pool.sanitize(task("softmax"), source)
    assert report is not None and report.ran and not report.ok and report.errors >= 1, report


@pytest.mark.parametrize("name", ["cheat_reuse_stale_output", "cheat_stale_shared_memory"])
def test_state_left_on_the_device_wins_no_comparison(gpu_pool, name):
    """What a launch leaves on the device holds an answer only for values seen before: an
    output block the allocator recycles (in an A/B on the same inputs it held the other
    model's answer: skipping rows that already matched won 78 % before released outputs were
    poisoned), or shared memory tagged by row and a 4-element fingerprint (skipping the
    reductions). Timed calls rotate over input sets with one element changed each call and
    see poisoned blocks, in an evaluation and in an A/B: neither cheat is faster than the
    honest seed (if the evaluation does not already reject it)."""
    seed = (SAMPLES / "softmax" / "seed_cuda.py").read_text()
    cheat = GPU_ONLY[name]
    result = gpu_pool.compare(task("softmax"), seed, cheat)
    assert not (result.ok and result.significant), result


def test_device_facts_through_cuda_python():
    import torch

    from evotui.dialects.cuda import device

    facts = device.query(0)
    assert facts.available, facts.error
    major, minor = torch.cuda.get_device_capability(0)
    assert facts.arch == f"sm_{major}{minor}" and facts.compute_capability == (major, minor)
    assert facts.sms == torch.cuda.get_device_properties(0).multi_processor_count
    assert facts.l2_bytes > 0 and facts.max_shared_per_block_optin >= 48 * 1024
    print(f"\n{facts.as_dict()}")


@pytest.mark.timeout(1200)
@pytest.mark.skipif(sanitizer.find() is None, reason="compute-sanitizer is not installed")
def test_compute_sanitizer_flags_memory_errors(gpu_pool):
    softmax = task("softmax")
    clean = gpu_pool.sanitize(softmax, (SAMPLES / "softmax" / "seed_cuda.py").read_text())
    assert clean is not None and clean.ran and clean.ok, clean
    for name in ("fault_oob_write", "fault_illegal_address"):
        report = gpu_pool.sanitize(softmax, CHECKED[name])
        assert report is not None and report.ran and not report.ok, (name, report)
        assert report.errors >= 1


@pytest.mark.timeout(900)
def test_a_param_run_improves_on_the_cuda_seed(gpu_pool, tmp_path, monkeypatch):
    from evotui import headless
    from evotui.engine.session import RunOptions

    monkeypatch.setenv("EVOTUI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("EVOTUI_SANITIZE", "0")  # tested above; here it would only cost minutes
    out = tmp_path / "run"
    options = RunOptions(task=str(SAMPLES / "softmax"), seed=str(SAMPLES / "softmax" / "seed_cuda.py"),
                         device="cuda", iterations=6, mutator="param", out=str(out), memory_k=0)
    err = io.StringIO()
    code = asyncio.run(headless.arun(options, evaluator=gpu_pool,
                                     console=Console(file=err, width=200), out=io.StringIO()))
    assert code == 0, err.getvalue()
    report = json.loads((out / "report.json").read_text())
    assert report["accepted"] >= 1 and not report["interpreter"]
    assert report["best"]["id"] != report["seed"]["id"], report["best"]
    assert report["best"]["speedup_vs_seed"] > 1.0
    print(f"\nparam run on the CUDA softmax seed: {report['best']}")
