"""Every sample's seed is accepted on the CPU interpreter: honest candidates with several
kernels (cross_entropy), constructor arguments (row_sum, layernorm), weights (rmsnorm,
layernorm, matmul), fp32 accumulation over bf16 inputs (rmsnorm, matmul)."""

from __future__ import annotations

import pytest

from evotui.engine.tunables import find_tunables, set_tunables
from evotui.eval import EvalRequest
from evotui.task.model import resolve_task
from tests.conftest import SAMPLES

NAMES = sorted(p.name for p in SAMPLES.iterdir() if (p / "seed.py").is_file())


@pytest.mark.parametrize("name", NAMES)
def test_seed_is_accepted_on_the_interpreter(cpu_pool, name):
    task = resolve_task(SAMPLES / name)
    result = cpu_pool.evaluate(EvalRequest(task=task, source=task.seed_path.read_text()))
    assert result.accepted, (result.reason, result.message)
    assert result.interpreter and result.speedup_eager is None and result.roofline_pct is None
    assert sum(result.launches.values()) >= 5


def test_ignoring_the_weights_is_caught(cpu_pool):
    """rmsnorm's weights are not all ones: a candidate that skips them is wrong."""
    task = resolve_task(SAMPLES / "rmsnorm")
    source = task.seed_path.read_text()
    assert "w_ptr" in source or "weight" in source
    broken = source.replace("* w", "* 1.0") if "* w" in source else None
    if broken is None or broken == source:
        pytest.skip("seed does not multiply by the weight in a recognisable way")
    result = cpu_pool.evaluate(EvalRequest(task=task, source=broken))
    assert not result.accepted and result.reason == "mismatch", (result.reason, result.message)


# the Triton seeds whose tunables reach beyond launch options (rows per program, pipelining,
# one-pass paths): every declared knob must keep them correct
RICH = ["add_gelu", "cross_entropy", "layernorm", "rmsnorm", "rmsnorm_fp16", "rmsnorm_wide",
        "row_sum", "softmax"]


def corners(source: str) -> list[dict[str, int]]:
    """Every tunable at its largest choice; then the same with the smallest BLOCK_SIZE (row
    loops over several chunks, one-pass knobs falling back to the looping kernel)."""
    found = find_tunables(source)
    top = {t.name: max(t.choices) for t in found}
    out = [top]
    if "BLOCK_SIZE" in top:
        out.append({**top, "BLOCK_SIZE": min(t.choices for t in found if t.name == "BLOCK_SIZE")[0]})
    return out


@pytest.mark.parametrize("name", RICH)
def test_tunable_corners_are_accepted_on_the_interpreter(cpu_pool, name):
    task = resolve_task(SAMPLES / name)
    seed = task.seed_path.read_text()
    for values in corners(seed):
        result = cpu_pool.evaluate(EvalRequest(task=task, source=set_tunables(seed, values)))
        assert result.accepted, (values, result.reason, result.message)


@pytest.mark.parametrize("mode", [1, 2])
def test_matmul_tma_modes_are_accepted_on_the_interpreter(cpu_pool, mode):
    """TMA descriptors (and persistent programs) on the shape whose strides allow them; the
    CPU shape with a 140-byte row stride takes the pointer kernel in the same evaluation."""
    task = resolve_task(SAMPLES / "matmul_bias_relu")
    seed = task.seed_path.read_text()
    result = cpu_pool.evaluate(EvalRequest(task=task, source=set_tunables(
        seed, {"TMA_MODE": mode, "BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32, "GROUP_M": 4})))
    assert result.accepted, (result.reason, result.message)
