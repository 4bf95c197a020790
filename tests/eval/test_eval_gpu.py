"""GPU-only checks of the harness (run by scripts/gpu-check.sh on the lent H200)."""

from __future__ import annotations

import pytest

from evotui.eval import EvalRequest
from tests.conftest import CANDIDATES, SAMPLES

pytestmark = pytest.mark.gpu
SOFTMAX = CANDIDATES / "softmax"
SAMPLE_NAMES = sorted(p.name for p in SAMPLES.iterdir() if (p / "seed.py").is_file())


def run(pool, task, name):
    return pool.evaluate(EvalRequest(task=task, source=(SOFTMAX / name).read_text(), name=name))


@pytest.mark.parametrize("sample", SAMPLE_NAMES)
def test_every_seed_is_accepted_with_speedups(gpu_pool, sample):
    from evotui.task.model import resolve_task

    task = resolve_task(SAMPLES / sample)
    result = gpu_pool.evaluate(EvalRequest(task=task, source=task.seed_path.read_text()))
    assert result.accepted, (result.reason, result.message)
    assert not result.interpreter
    assert result.speedup_eager and result.speedup_eager > 0
    assert result.roofline_pct and 1 < result.roofline_pct < 105


@pytest.mark.parametrize("sample", ["rmsnorm", "layernorm"])
def test_short_seeds_are_accepted_run_after_run(gpu_pool, sample):
    """40 µs kernels whose host call is several times the kernel: every evaluation of them
    must pass the side-stream and value-cache guards (each once rejected one run in five)."""
    from evotui.task.model import resolve_task

    task = resolve_task(SAMPLES / sample)
    results = [gpu_pool.evaluate(EvalRequest(task=task, source=task.seed_path.read_text()))
               for _ in range(4)]
    assert all(r.accepted for r in results), [(r.reason, r.message) for r in results]
    times = [r.time_ms for r in results]
    assert (max(times) - min(times)) / min(times) < 0.05, times  # the spread is the bench's job


@pytest.mark.parametrize(("name", "reasons"), [
    ("cheat_stale_memory.py", {"unwritten_output"}),
    ("gpu_cheat_replay_late.py", {"stale_output", "unwritten_output"}),  # replay poisoned
    ("cheat_identity_cache.py", {"stale_output", "mismatch", "unwritten_output"}),  # kept a poisoned tensor
    ("cheat_side_stream.py", {"forbidden_attribute"}),
    ("cheat_torch_fallback.py", {"torch_fallback"}),
])
def test_gpu_cheats_are_rejected(gpu_pool, softmax_task, name, reasons):
    result = run(gpu_pool, softmax_task, name)
    assert not result.accepted and result.reason in reasons, (result.reason, result.message)


def test_gpu_value_keyed_cache_never_profits(gpu_pool, softmax_task):
    """Every value of a timed set changes before each timed call, so a cache keyed
    on a few input values never hits a timed call: the cheat computes (and clones) every time.
    It may hit in the value-cache guard's "same values" calls, whose outputs are not judged;
    there the copy moves as many bytes as the softmax, so the guard cannot see it either.
    With one element perturbed it was rejected (its key missed that element); now it must be
    rejected or, accepted, be no faster than the honest seed."""
    cheat = run(gpu_pool, softmax_task, "cheat_value_keyed_cache.py")
    if not cheat.accepted:
        assert cheat.reason in {"cached_results", "stale_output"}, (cheat.reason, cheat.message)
        return
    seed = gpu_pool.evaluate(EvalRequest(task=softmax_task,
                                         source=softmax_task.seed_path.read_text()))
    assert seed.accepted and cheat.time_ms >= 0.98 * seed.time_ms, (cheat.time_ms, seed.time_ms)


def test_a_value_cache_is_told_from_an_honest_kernel_by_cuda_events():
    """The fresh-vs-repeat rounds on real CUDA work: a cache computes a GEMM on values it has
    not seen and copies its answer otherwise; an honest call computes the GEMM every time."""
    import torch

    from evotui.eval.timing import CudaTimer

    timer = CudaTimer(torch.device("cuda"))
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    cached = torch.empty_like(a)
    seen: set[tuple[int, bool]] = set()
    state = {"hit": False}

    def refresh(i: int, kind: str) -> None:
        key = (i, kind == "patch")
        state["hit"] = key in seen
        seen.add(key)
        a[0, 0] = float(i) + (0.5 if kind == "patch" else 0.0)

    def cache() -> None:
        if state["hit"]:
            cached.clone()
        else:
            torch.matmul(a, a, out=cached)

    check = timer.fresh_vs_same(cache, refresh)
    assert check.looks_cached(interpreter=False), check
    honest = timer.fresh_vs_same(lambda: torch.matmul(a, a), refresh)
    assert not honest.looks_cached(interpreter=False), honest


def test_recomputing_only_the_perturbed_rows_is_caught(gpu_pool):
    """A GEMM that recomputes only the row blocks changed since it last saw the tensor (it
    keeps a copy of every input set): the value rounds' one-element changes find it."""
    from evotui.eval import EvalRequest
    from evotui.task.model import resolve_task
    from tests.conftest import CANDIDATES, SAMPLES

    source = (CANDIDATES / "matmul" / "cheat_incremental_patch.py").read_text()
    result = gpu_pool.evaluate(EvalRequest(task=resolve_task(SAMPLES / "matmul_bias_relu"),
                                           source=source))
    assert (result.accepted, result.reason) == (False, "cached_results"), result.message


def test_side_stream_is_caught_at_runtime_without_static_rules(raw_gpu_pool, softmax_task):
    result = run(raw_gpu_pool, softmax_task, "gpu_cheat_side_stream_raw.py")
    # the work escapes the timed stream: caught by the synchronised cross-check, or, where
    # the call is short enough to be timed by graph replay, by the roofline floor, or by the
    # audit of a timed call picked at random (its output unfinished when the call "ended":
    # stale, or still the poison it was handed, never written)
    assert result.reason in {"unsynced_work", "below_roofline", "stale_output",
                             "unwritten_output"}, (result.reason, result.message)


def test_illegal_address_costs_one_worker_and_the_next_candidate_runs(gpu_pool, softmax_task):
    result = run(gpu_pool, softmax_task, "gpu_fault_illegal_address.py")
    assert result.reason in {"cuda_error", "crashed"}, (result.reason, result.message)
    ok = gpu_pool.evaluate(EvalRequest(task=softmax_task,
                                       source=(SAMPLES / "softmax" / "seed.py").read_text()))
    assert ok.accepted, ok.message


def test_interleaved_ab_declares_a_real_gain_and_not_noise(gpu_pool, softmax_task):
    """The seed against itself is no gain; against a deliberately slowed copy it is."""
    seed = (SAMPLES / "softmax" / "seed.py").read_text()
    same = gpu_pool.compare(softmax_task, seed, seed)
    assert same.ok and not same.significant, same
    slow = seed.replace("NUM_WARPS = 8", "NUM_WARPS = 1")
    faster = gpu_pool.compare(softmax_task, slow, seed)
    assert faster.ok and faster.significant and faster.gain_pct > 5, faster


def test_a_comparison_is_watched_like_an_evaluation(gpu_pool, softmax_task):
    """A candidate that returns torch's answer once it believes it is being compared (its
    first allocation unpoisoned) wins no gain: the comparison's first call is poisoned, and
    a random share of its samples run under the op policy (then: torch_fallback)."""
    seed = (SAMPLES / "softmax" / "seed.py").read_text()
    cheat = (SOFTMAX / "gpu_cheat_ab_compare_unwatched.py").read_text()
    result = gpu_pool.compare(softmax_task, seed, cheat)
    assert not (result.ok and result.significant), result
    assert result.ok or result.reason == "torch_fallback", result


def test_ab_outputs_are_checked(gpu_pool, softmax_task):
    seed = (SAMPLES / "softmax" / "seed.py").read_text()
    cheat = (SOFTMAX / "gpu_cheat_replay_late.py").read_text()
    result = gpu_pool.compare(softmax_task, seed, cheat)
    # the replayed tensor is poisoned when the harness lets go of it between calls
    assert not result.ok and result.reason in {"stale_output", "unwritten_output"}, result


def _gpu_memory_mib(pid: int) -> int | None:
    import subprocess

    out = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,used_memory",
                          "--format=csv,noheader,nounits"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        p, _, mib = line.partition(",")
        if p.strip() == str(pid):
            return int(mib)
    return None


def test_a_long_run_does_not_grow_the_workers_gpu_memory(gpu_pool):
    """Regression: the unwritten-output poisoning used to claim a fresh segment of twice the
    input size on every trial; a worker on row_sum (8192×8192 fp32) ran out of memory after
    ~70 evaluations."""
    import random

    from evotui.engine.param_mutator import ParamMutator
    from evotui.task.model import resolve_task

    task = resolve_task(SAMPLES / "row_sum")
    seed = task.seed_path.read_text()
    rng, tried = random.Random(0), set()
    variants = [m.source for m in (ParamMutator().mutate(seed, rng, tried) for _ in range(14)) if m]
    for source in [seed] + variants[:3]:  # warm: caches reach their working size
        assert gpu_pool.evaluate(EvalRequest(task=task, source=source)).accepted
    pids = [lane.candidate.proc.pid for lane in gpu_pool.lanes]
    before = [_gpu_memory_mib(p) for p in pids]
    if None in before:
        pytest.skip("nvidia-smi does not list this container's processes")
    for source in variants[3:]:
        assert gpu_pool.evaluate(EvalRequest(task=task, source=source)).accepted
    after = [_gpu_memory_mib(p) for p in pids]
    growth = [a - b for a, b in zip(after, before, strict=True)]
    assert max(growth) < 1024, f"candidate workers grew by {growth} MiB over {len(variants) - 3} evaluations"


def test_a_clear_loser_is_timed_coarsely_and_still_fully_checked(gpu_pool, softmax_task):
    seed = (SAMPLES / "softmax" / "seed.py").read_text()
    full = gpu_pool.evaluate(EvalRequest(task=softmax_task, source=seed))
    coarse = gpu_pool.evaluate(EvalRequest(task=softmax_task, source=seed,
                                           slow_cutoff_ms=full.time_ms / 4))
    assert full.accepted and full.timing_method == "events", full.message
    assert coarse.accepted and coarse.timing_method == "coarse", coarse.message
    assert abs(coarse.time_ms / full.time_ms - 1) < 0.05  # few samples, same call
    cheat = (SOFTMAX / "cheat_identity_cache.py").read_text()  # the rechecks still run
    caught = gpu_pool.evaluate(EvalRequest(task=softmax_task, source=cheat, slow_cutoff_ms=1e-6))
    assert caught.reason in {"stale_output", "mismatch", "unwritten_output"}, \
        (caught.reason, caught.message)


SPY = '''"""Test spy, not a candidate: the seed's softmax, which first counts the rows whose freshly
allocated output already holds their answer (on the device); each call logs the running
count (read before its launch, where a scalar read is allowed)."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

LOG = {log!r}
FOUND = []


@triton.jit
def spy_softmax_kernel(x_ptr, y_ptr, found_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x - tl.max(x, axis=0))
    y = e / tl.sum(e, axis=0)
    old = tl.load(y_ptr + row * n_cols + cols, mask=mask, other=0.0)
    same = tl.where(mask, tl.abs(old - y) <= 1e-6, 1)  # NaN (poison) never matches
    if tl.min(same.to(tl.int32), axis=0) == 1:
        tl.atomic_add(found_ptr, 1)
    tl.store(y_ptr + row * n_cols + cols, y, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        if not FOUND:
            FOUND.append(torch.zeros(1, dtype=torch.int32, device=x.device))
        with open(LOG, "a") as f:
            f.write(f"{{int(FOUND[0][0])}}\\n")
        x = x.contiguous()
        y = torch.empty_like(x)
        spy_softmax_kernel[(x.shape[0],)](x, y, FOUND[0], x.shape[1],
                                          BLOCK=triton.next_power_of_2(x.shape[1]), num_warps=8)
        return y
'''


@pytest.fixture(scope="module")
def unsandboxed_gpu_pool():
    """For a spy that must write what it saw where the test can read it: the sandbox would
    (rightly) keep its log from leaving the candidate's scratch folder."""
    from evotui.eval import EvaluatorPool

    with EvaluatorPool("cuda", static_checks=False, sandbox=False) as pool:
        yield pool


def test_no_call_finds_an_earlier_answer_in_its_output(unsandboxed_gpu_pool, softmax_task,
                                                       tmp_path):
    """Between timed calls (an evaluation's, and an A/B's) the released output is poisoned:
    no allocation a call makes holds an answer for the values it is about to see."""
    raw_gpu_pool = unsandboxed_gpu_pool
    log = tmp_path / "spy.log"
    spy = SPY.format(log=str(log))
    result = raw_gpu_pool.evaluate(EvalRequest(task=softmax_task, source=spy))
    assert result.accepted, result.message  # the spy computes honestly
    seed = (SAMPLES / "softmax" / "seed.py").read_text()
    ab = raw_gpu_pool.compare(softmax_task, seed, spy)
    assert ab.ok, ab
    counts = [int(line) for line in log.read_text().split()]
    assert len(counts) > 100
    assert counts[-1] == 0, f"{counts[-1]} rows already held their answer ({len(counts)} calls)"


def test_inputs_that_crowd_the_device_wait_on_the_host_and_keep_their_fingerprints(monkeypatch):
    import torch

    import evotui.eval.pending_inputs as pending_inputs
    from evotui.eval.digest import fingerprint

    device = torch.device("cuda:0")
    x = torch.randn(1 << 20, device=device)
    monkeypatch.setattr(pending_inputs, "_host_free_bytes", lambda: 1 << 60)
    for inverse, on_host in ((1, False), (1 << 30, True)):  # room to spare / never room
        monkeypatch.setattr(pending_inputs, "HOST_WHEN_OVER_FREE_INVERSE", inverse)
        waiting = pending_inputs.PendingInputs(torch, device)
        entry = waiting.add([x])
        assert waiting._waiting[0].values[0].device.type == ("cpu" if on_host else "cuda")
        waiting.settle(12345)
        assert entry[0]["device"] == "cuda" and entry[0]["digest"] == fingerprint(x, 12345)


def test_three_candidates_of_one_gpu_are_timed_alone_and_judged_side_by_side():
    """Three candidate workers on one GPU: their trials and the judge share the device, their
    timed calls have it alone, and the seed's time does not move with its neighbours."""
    from concurrent.futures import ThreadPoolExecutor

    from evotui.eval import EvaluatorPool
    from evotui.task.model import resolve_task
    from tests.eval.test_device_gate import RecordingGate

    task = resolve_task(SAMPLES / "softmax")
    seed = task.seed_path.read_text()
    gate = RecordingGate()
    with EvaluatorPool("cuda:0", per_device=3) as pool:
        for lane in pool.lanes:
            lane.gate = gate
        with ThreadPoolExecutor(3) as ex:
            results = list(ex.map(pool.evaluate, [EvalRequest(task=task, source=seed)
                                                  for _ in range(6)]))
    assert all(r.accepted for r in results), [(r.reason, r.message) for r in results]
    assert gate.broken == []
    assert gate.alone_times >= 6 + 1  # each candidate's timing, and the judge's baselines once
    assert gate.most_sharing >= 2  # untimed work of two candidates overlapped
    times = [r.time_ms for r in results]
    assert (max(times) - min(times)) / min(times) < 0.1, times
