"""A task with no seed starts from a seed derived from its reference (no model needed):
KernelBench-format files of our own (tests/kernelbench_style) get a candidate from the
element-wise, reduction or matrix-product template, or one line saying why not; derived
candidates pass the static rules, compute what the reference computes at shapes other
than the traced one, and a no-seed `evotui run` on the CPU reaches an accepted seed."""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from evotui import headless
from evotui.dialects import get_backend
from evotui.engine.session import RunOptions
from evotui.seed import derive_seed
from evotui.task.model import resolve_task
from tests.conftest import ROOT

KB = Path(__file__).resolve().parents[1] / "kernelbench_style"
FAMILY = {
    "01_Tanh": "elementwise", "02_LeakyReLU_slope": "elementwise",
    "03_Matrix_times_scalar": "elementwise", "04_HardSwish_Softplus": "elementwise",
    "17_Channel_scale_bias_chain": "elementwise",
    "05_Softmax_last": "reduction", "06_LogSoftmax_channels": "reduction",
    "07_Mean_over_dim": "reduction", "08_Argmin_last": "reduction",
    "09_RMSNorm_features": "reduction", "10_LayerNorm_affine": "reduction",
    "11_MSE_loss": "reduction", "19_Frobenius_normalise": "reduction",
    "12_Square_matmul": "gemm", "13_Batched_matmul_transposed_B": "gemm",
    "14_Gemm_BiasAdd_GELU": "gemm", "15_Matmul_Scaling_ResidualAdd": "gemm",
    "18_Max_pooling_2D": "pooling", "20_GroupNorm_channels": "reduction",
    "16_Conv2d_ReLU_BiasAdd": "convolution", "22_Conv_transposed_3D_grouped": "convolution",
    "23_Conv1d_dilated_strided": "convolution", "24_Conv_depthwise_2D_Tanh": "convolution",
    "25_Conv2d_Min_constant_Scale": "convolution",
    "26_Conv2d_Sigmoid_GroupNorm": "convolution+reduction",
    "27_Cumsum_reverse_residual": "scan",
    "28_Conv_depthwise_separable_2D": "convolution+convolution",
    "29_KLDiv_batchmean": "reduction+elementwise", "30_Row_mean_by_hand": "reduction+elementwise",
}
NO_TEMPLATE = {"21_CrossEntropy_targets": "gathers"}

# Run in a fresh interpreter process (TRITON_INTERPRET must be set before triton loads):
# each derived ModelNew against Model, with the same parameters, at the CPU shape and at an
# odd shape the seed was not traced at (the benchmark shape differs from the traced one too).
# argv[1] (JSON): constants to multiply at that shape, for files named in it.
CHECK = r"""
import json, sys, types
import torch
from evotui.seed import derive_seed
from evotui.task.model import load_module, resolve_task
from evotui.task.shapes import size_constants

def odd(v):
    if isinstance(v, tuple):
        return tuple(odd(x) for x in v)
    return v // 2 + 1 if v >= 32 else v

out = {}
scales = json.loads(sys.argv[1])
for path in sys.argv[2:]:
    task = resolve_task(path)
    scale = scales.get(task.name, {})
    traced = task.shapes("cpu")[0]
    seed = derive_seed(task)
    module = load_module(task.path, "t")
    errors = []
    for shape in (traced, {k: odd(v) * scale.get(k, 1) for k, v in traced.items()}):
        module.__dict__.update(shape)
        cand = types.ModuleType("cand")
        exec(compile(seed.source, "derived.py", "exec"), cand.__dict__)
        torch.manual_seed(0)
        ref = module.Model(*module.get_init_inputs()).eval()
        torch.manual_seed(0)
        new = cand.ModelNew(*module.get_init_inputs())
        torch.manual_seed(1)
        inputs = module.get_inputs()
        with torch.no_grad():
            want, got = ref(*inputs), new(*inputs)
        same = (want.shape == got.shape and want.dtype == got.dtype
                and torch.allclose(want.double(), got.double(), atol=1e-4, rtol=1e-4))
        errors.append(bool(same))
    out[task.name] = errors
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def derived():
    return {f.stem: derive_seed(resolve_task(f)) for f in sorted(KB.glob("*.py"))}


def test_each_file_gets_its_family_template_or_a_one_line_reason(derived):
    assert set(derived) == set(FAMILY) | set(NO_TEMPLATE)
    for name, family in FAMILY.items():
        assert derived[name].ok, (name, derived[name].reason)
        assert derived[name].family == family, name
    for name, what in NO_TEMPLATE.items():
        seed = derived[name]
        assert not seed.ok and "\n" not in seed.reason
        assert what in seed.reason and "--seed FILE" in seed.reason
        assert "--allow-torch aten::" in seed.reason


def test_derived_seeds_are_clean_candidates_the_static_rules_accept(derived):
    backend = get_backend("triton")
    for name in FAMILY:
        source = derived[name].source
        assert backend.check_source(source) is None, name
        assert "class ModelNew(nn.Module)" in source and "@triton.jit" in source
        assert "TUNABLES = {" in source and "torch._inductor" not in source
    gemm = derived["12_Square_matmul"].source
    # fp32 tl.dot is TF32 on NVIDIA otherwise: IEEE products unless the search asks for 3xTF32
    assert "input_precision=PRECISION" in gemm and "TF32X3 = 0\n" in gemm
    assert 'PRECISION="tf32x3" if TF32X3 else "ieee"' in gemm
    for knob in ("BLOCK_M", "BLOCK_N", "BLOCK_K", "NUM_WARPS", "NUM_STAGES", "TF32X3"):
        assert f'"{knob}"' in gemm


def test_derived_tunables_are_what_the_param_mutator_searches(derived):
    from evotui.engine.tunables import find_tunables

    names = {t.name for t in find_tunables(derived["05_Softmax_last"].source)}
    assert {"BLOCK_R", "BLOCK_INNER", "NUM_WARPS", "NUM_STAGES"} <= names


@pytest.mark.slow
def test_derived_seeds_compute_the_reference_at_the_traced_and_another_shape():
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT)}
    files = [str(KB / f"{name}.py") for name in FAMILY]
    # more channels than traced: a depthwise convolution's groups follow its channels
    scales = {"28_Conv_depthwise_separable_2D": {"in_channels": 2, "out_channels": 2},
              "24_Conv_depthwise_2D_Tanh": {"channels": 2}}
    p = subprocess.run([sys.executable, "-c", CHECK, json.dumps(scales), *files],
                       capture_output=True, text=True,
                       env=env, cwd=ROOT, timeout=600)
    assert p.returncode == 0, p.stderr[-3000:]
    results = json.loads(p.stdout.strip().splitlines()[-1])
    wrong = {name: r for name, r in results.items() if r != [True, True]}
    assert not wrong, wrong


SIZED = """
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x.sum(dim=-1) / {divisor}


batch_size = 32
width = 64


def get_inputs():
    return [torch.randn(batch_size, width)]


def get_init_inputs():
    return []
"""


def test_a_traced_number_follows_the_size_it_was_and_only_that(derived, tmp_path):
    batchmean = derived["29_KLDiv_batchmean"].source  # the batch, not the equal row length
    assert "float(math.prod(predictions.shape[0:1]))" in batchmean
    assert "1.0 / math.prod(x.shape[1:2])" in derived["30_Row_mean_by_hand"].source
    constant = tmp_path / "constant.py"  # 64.0 is the width only by chance: it stays a number
    constant.write_text(SIZED.format(divisor="64.0"))
    seed = derive_seed(resolve_task(constant))
    assert seed.ok and "64.0" in seed.source and "torch.full((), " not in seed.source
    moving = tmp_path / "moving.py"  # twice the batch: the width at the traced shape only
    moving.write_text(SIZED.format(divisor="(2 * x.shape[0])"))
    seed = derive_seed(resolve_task(moving))
    assert not seed.ok and "changes with the input's size" in seed.reason
    assert "--seed FILE" in seed.reason and "\n" not in seed.reason


def test_allowed_torch_ops_stay_in_torch_and_the_rest_is_derived():
    task = resolve_task(KB / "16_Conv2d_ReLU_BiasAdd.py", allow_torch=("aten::convolution",))
    seed = derive_seed(task)
    assert seed.ok and seed.family == "elementwise", seed.reason
    assert "F.conv2d(" in seed.source and get_backend("triton").check_source(seed.source) is None
    only_conv = resolve_task(KB / "16_Conv2d_ReLU_BiasAdd.py",
                             allow_torch=("aten::convolution", "aten::relu", "aten::add"))
    why = derive_seed(only_conv).reason
    assert "nothing is left for a kernel" in why


def run_inprocess(options: RunOptions, pool) -> tuple[int, str]:
    err, out = io.StringIO(), io.StringIO()
    console = Console(file=err, width=200, force_terminal=False)
    code = asyncio.run(headless.arun(options, evaluator=pool, console=console, out=out))
    return code, err.getvalue()


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("name,shape", [
    ("01_Tanh", {"batch_size": 16, "dim": 512}),
    ("07_Mean_over_dim", {"batch_size": 4, "dim1": 64, "dim2": 33}),
    ("14_Gemm_BiasAdd_GELU", {"batch_size": 16, "in_features": 64, "out_features": 48,
                              "bias_shape": (48,)}),
])
def test_a_no_seed_run_reaches_an_accepted_derived_seed(cpu_pool, tmp_path, monkeypatch,
                                                         name, shape):
    monkeypatch.setenv("EVOTUI_HOME", str(tmp_path / "home"))
    out = tmp_path / "run"
    code, stderr = run_inprocess(RunOptions(
        task=str(KB / f"{name}.py"), device="cpu", iterations=1, mutator="param",
        out=str(out), memory_k=0, shape=shape), cpu_pool)
    assert code == 0, stderr
    assert f"seed: derived from the reference ({FAMILY[name]} template)" in stderr
    report = json.loads((out / "report.json").read_text())
    assert report["seed"]["mutator"] == "seed" and report["accepted"] >= 1, report
    assert report["best"] is not None
    run = json.loads((out / "checkpoint.json").read_text())["run"]
    assert run["seed_origin"] == f"derived from the reference ({FAMILY[name]} template)"
    assert "ModelNew" in (out / "best.py").read_text()


def test_no_seed_and_no_template_is_one_line_before_any_evaluation(tmp_path):
    env = {**os.environ, "EVOTUI_HOME": str(tmp_path / "home"), "PYTHONPATH": str(ROOT)}
    p = subprocess.run([sys.executable, "-m", "evotui", "run", str(KB / "21_CrossEntropy_targets.py"),
                        "--headless", "--device", "cpu", "--mutator", "param"],
                       capture_output=True, text=True, env=env, cwd=ROOT, timeout=170)
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr
    line = [s for s in p.stderr.splitlines() if s.startswith("error:")]
    assert len(line) == 1 and "no template for gathers" in line[0]
    p = subprocess.run([sys.executable, "-m", "evotui", "run", str(KB / "01_Tanh.py"),
                        "--headless", "--device", "cpu", "--mutator", "llm"],
                       capture_output=True, text=True, env=env, cwd=ROOT, timeout=170)
    assert p.returncode == 2 and "--mutator param" in p.stderr, p.stderr
