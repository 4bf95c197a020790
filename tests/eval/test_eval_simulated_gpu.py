"""The worker's GPU code path on the CPU (tests/simulated_gpu.py: a CudaTimer with wall-clock
stand-ins for its CUDA parts, kernels in Triton's interpreter): which calls a GPU evaluation
and an A/B judge. Times mean nothing here; verdicts do."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import CANDIDATES, SAMPLES

ROOT = SAMPLES.parent
SOFTMAX = SAMPLES / "softmax"
PREPARED_CHEAT = CANDIDATES / "softmax" / "cheat_dishonest_when_prepared.py"


def simulate(*args: str) -> dict:
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run([sys.executable, "-m", "tests.simulated_gpu", *map(str, args)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_seed_passes_the_gpu_path():
    verdict = simulate("evaluate", SOFTMAX, SOFTMAX / "seed.py", "--wall-clock-bars")
    assert verdict["accepted"], verdict
    assert simulate("ab", SOFTMAX, SOFTMAX / "seed.py", SOFTMAX / "seed.py")["ok"]


@pytest.mark.parametrize("mode", ["evaluate", "ab"])
def test_half_the_work_in_the_prepared_calls_is_caught(mode):
    """A candidate that knows which calls are the timer's prepared ones (warm-up and
    sampled) computed half the rows there and was honest in every call that was judged. One
    prepared call picked at random is judged now, in an evaluation and in an A/B."""
    if mode == "evaluate":
        verdict = simulate("evaluate", SOFTMAX, PREPARED_CHEAT, "--raw")
        assert not verdict["accepted"], verdict
    else:
        verdict = simulate("ab", SOFTMAX, SOFTMAX / "seed.py", PREPARED_CHEAT, "--raw")
        assert not verdict["ok"] and verdict["index"] == 1, verdict
    # the rows it skipped hold what the buffer held: the harness's poison (NaN or its byte
    # pattern) or an earlier call's values; every one is a catch of the audited call
    assert verdict["reason"] in {"stale_output", "unwritten_output", "nan_inf"}, verdict
    assert "picked at random" in verdict["message"], verdict


def test_patching_the_changed_rows_only_on_rotating_tensors_is_caught():
    """A GEMM recomputed only the row blocks that changed whenever its input was
    another tensor than the previous call's (the timed calls rotate over input sets), and
    everything when the same tensor came twice (the value-cache rounds used one tensor).
    Those rounds rotate over the sets too now: `cached_results`."""
    verdict = simulate("evaluate", SAMPLES / "matmul_bias_relu",
                       CANDIDATES / "matmul" / "cheat_patch_rows_identity.py")
    assert (verdict["accepted"], verdict["reason"]) == (False, "cached_results"), verdict


@pytest.mark.parametrize(("memory", "timed"), [(10**15, 12), (1, 1)])
def test_the_timed_input_sets_are_as_many_as_fit_and_the_judge_agrees(memory, timed):
    """Of the 12 input sets asked for, the pool names as many as fit in a share of the
    GPU's memory (one when none does); the worker times those and the judge accepts."""
    verdict = simulate("evaluate", SOFTMAX, SOFTMAX / "seed.py", "--sets=12", f"--gpu-memory={memory}")
    assert verdict["accepted"], verdict
    assert verdict["timed_sets"] == timed


def test_graph_timed_calls_are_replayed_on_new_values_and_judged():
    """Replays of a timing graph run without new values between them: one more replay on
    new values written into the same tensors is judged, and a report without it is not
    believed."""
    verdict = simulate("evaluate", SOFTMAX, SOFTMAX / "seed.py", "--graph", "--wall-clock-bars")
    assert verdict["accepted"] and verdict["method"] == "graph", verdict
    assert verdict["graph_replayed"], verdict
    dropped = simulate("evaluate", SOFTMAX, SOFTMAX / "seed.py", "--graph", "--drop-graph-replay",
                       "--wall-clock-bars")
    assert (dropped["accepted"], dropped["reason"]) == (False, "tampered"), dropped
