"""Unchanged KernelBench-format files run on the CPU: the interpreter's shape is chosen from
the file's own size constants (ratios kept, small constants left alone), the footprint
counts inputs, outputs, weights and FLOPs, `--shape NAME=VALUE` sets a constant, and what
is too big or mistyped says so in one line naming the file's real constants."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from evotui.task.model import TaskError, load_module, resolve_task
from evotui.task.preflight import preflight
from evotui.task.shapes import CPU_BYTES_LIMIT, footprint, size_constants
from tests.conftest import ROOT

KB = Path(__file__).resolve().parents[1] / "kernelbench_style"


def test_the_file_s_own_constants_are_found_not_always_batch_size():
    assert size_constants(load_module(KB / "12_Square_matmul.py", "t")) == {"N": 4096}
    mean = size_constants(load_module(KB / "07_Mean_over_dim.py", "t"))
    assert mean == {"batch_size": 128, "dim1": 4096, "dim2": 4095, "reduce_dim": 1}
    gemm = size_constants(load_module(KB / "14_Gemm_BiasAdd_GELU.py", "t"))
    assert gemm["bias_shape"] == (8192,) and "in_features" in gemm


def test_the_cpu_shape_shrinks_sizes_keeps_ratios_and_small_constants():
    task = resolve_task(KB / "07_Mean_over_dim.py")
    shape = task.shapes("cpu")[0]
    assert shape["reduce_dim"] == 1  # an index, not a size: never shrunk
    assert shape["dim1"] < 4096 and shape["dim1"] / shape["dim2"] == pytest.approx(4096 / 4095,
                                                                                   rel=0.01)
    assert shape["batch_size"] >= 16
    chosen = task.cpu_shape()
    assert chosen.footprint.total_bytes <= CPU_BYTES_LIMIT
    note = chosen.note()
    assert "dim1=" in note and "(from 4096)" in note and "reduce_dim" not in note
    # a tuple constant shrinks with the sizes it mirrors
    mse = resolve_task(KB / "11_MSE_loss.py").shapes("cpu")[0]
    assert mse["input_shape"] == (mse["batch_size"],)


def test_the_footprint_counts_outputs_weights_and_flops():
    module = load_module(KB / "14_Gemm_BiasAdd_GELU.py", "t")
    shape = {"batch_size": 32, "in_features": 64, "out_features": 48, "bias_shape": (48,)}
    fp = footprint(module, shape)
    assert fp.exact
    assert fp.input_bytes == 32 * 64 * 4 and fp.output_bytes == 32 * 48 * 4
    assert fp.weight_bytes == (64 * 48 + 48 + 48) * 4
    assert fp.flops == 2 * 32 * 64 * 48


def test_shape_overrides_apply_everywhere_and_unknown_names_list_the_real_ones():
    task = resolve_task(KB / "12_Square_matmul.py", shape={"N": 64})
    assert task.shapes("cpu") == [{"N": 64}] and task.shapes("cuda") == [{"N": 64}]
    part = resolve_task(KB / "01_Tanh.py", shape={"dim": 300})
    cpu = part.shapes("cpu")[0]
    assert cpu["dim"] == 300 and cpu["batch_size"] < 4096  # the other constant still shrinks
    with pytest.raises(TaskError, match=r"no size constant batch_size \(its constants: N\)"):
        resolve_task(KB / "12_Square_matmul.py", shape={"batch_size": 8})


def test_preflight_says_what_it_chose_and_what_is_too_big():
    task = resolve_task(KB / "05_Softmax_last.py")
    note = preflight(task, cpu=True)
    assert note.startswith("CPU shape: ") and "batch_size=" in note and "dim=" in note
    assert "the reference takes" in note
    big = resolve_task(KB / "12_Square_matmul.py", shape={"N": 4096})
    with pytest.raises(TaskError) as e:
        preflight(big, cpu=True)
    assert "N=4096" in str(e.value) and "--shape" in str(e.value) and "FLOPs" in str(e.value)


def test_literal_sizes_that_are_not_constants_say_so(tmp_path):
    (tmp_path / "literal.py").write_text(
        "import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n"
        "    def forward(self, x):\n        return x * 2\n\n\n"
        "def get_inputs():\n    return [torch.randn(8192, 8192)]\n\n\n"
        "def get_init_inputs():\n    return []\n")
    with pytest.raises(TaskError) as e:
        preflight(resolve_task(tmp_path / "literal.py"), cpu=True)
    assert "not module constants" in str(e.value) and "cpu_shapes" in str(e.value)


def cli(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "EVOTUI_HOME": str(home), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "evotui", *args], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=170)


@pytest.mark.parametrize("args,expected", [
    (("--shape", "dim"), "give NAME=VALUE"),
    (("--shape", "dim=abc"), "is not an integer"),
    (("--shape", "dim=0"), "positive integers"),
    (("--shape", "M=64"), "its constants: batch_size, dim"),
    (("--allow-torch", "conv 2d"), "give aten op names"),
])
def test_cli_shape_and_allow_torch_mistakes_are_one_line(tmp_path, args, expected):
    p = cli("run", str(KB / "01_Tanh.py"), "--headless", "--device", "cpu", "--mutator", "param",
            *args, home=tmp_path)
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr and expected in p.stderr, p.stderr


@pytest.mark.slow
def test_bench_takes_shape_and_allow_torch(tmp_path):
    from evotui.seed import derive_seed

    task = resolve_task(KB / "16_Conv2d_ReLU_BiasAdd.py", allow_torch=("aten::convolution",))
    seed = tmp_path / "conv_relu_bias.py"
    seed.write_text(derive_seed(task).source)
    shape = ["--shape", "batch_size=2", "--shape", "height=12", "--shape", "width=12"]
    p = cli("bench", str(task.path), str(seed), "--device", "cpu", "--allow-torch", "conv2d",
            *shape, home=tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "CPU shape: " in p.stderr and "height=12 (from 128)" in p.stderr
    strict = cli("bench", str(task.path), str(seed), "--device", "cpu", *shape, "--json",
                 home=tmp_path)
    assert strict.returncode == 1 and '"torch_fallback"' in strict.stdout, strict.stdout[-2000:]


CONV3D_T = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size):
        super().__init__()
        self.conv = nn.ConvTranspose3d(in_channels, out_channels, kernel_size)

    def forward(self, x):
        return self.conv(x)


batch_size = 16
in_channels = 32
out_channels = 16
kernel_size = (3, 5, 7)
depth_in = 16
height_in = 32
width_in = 64


def get_inputs():
    return [torch.rand(batch_size, in_channels, depth_in, height_in, width_in)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size]
'''


def test_sizes_go_below_16_only_where_16_is_still_too_big(tmp_path):
    # a 3-D transposed convolution: at 16 for every size it is still ~4e9 FLOPs, minutes in
    # the interpreter; below 16 it fits, its kernel size untouched
    path = tmp_path / "conv3d_t.py"
    path.write_text(CONV3D_T)
    chosen = resolve_task(path).cpu_shape()
    assert chosen.footprint.fits_cpu(), chosen.footprint.describe()
    assert chosen.shape["kernel_size"] == (3, 5, 7)
    assert min(chosen.shape[k] for k in ("batch_size", "depth_in", "in_channels")) < 16
    assert chosen.shape["width_in"] / chosen.shape["depth_in"] == 4  # ratios kept
    # one that fits at 16 stays at 16 or more
    assert resolve_task(KB / "07_Mean_over_dim.py").shapes("cpu")[0]["batch_size"] >= 16
