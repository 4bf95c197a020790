"""The harness-side host code of CUDA candidates, exercised on the CPU with a stand-in for the
driver launch: binding names, planning launches, guard bands (and the judge's check of them),
ghost replay, device facts without a GPU, compute-sanitizer's verdicts, the task loader."""

from __future__ import annotations

import ctypes
import shutil

import pytest
import torch

from evotui.core import reasons
from evotui.dialects.base import CandidateError
from evotui.dialects.cuda import device, guards, launcher, sanitizer
from evotui.dialects.cuda.expr import ExprError
from evotui.dialects.cuda.launch_hooks import CudaLaunchRecorder
from evotui.dialects.cuda.model import Program, model_class
from evotui.dialects.cuda.spec import parse_spec
from evotui.task.model import load_module, make_init_inputs, make_inputs, resolve_task
from tests.conftest import SAMPLES

RMSNORM_CUDA = (SAMPLES / "rmsnorm" / "seed_cuda.py").read_text()
SHAPE = {"batch_size": 7, "dim": 300}


@pytest.fixture(scope="module")
def rmsnorm():
    return load_module(SAMPLES / "rmsnorm" / "task.py", "evotui_task")


@pytest.fixture
def launches(monkeypatch):
    """Every launch the adapter makes, instead of the driver call."""
    calls: list[dict] = []

    def fake_launch(kernel, grid, block, shared, stream, args, max_shared_optin):
        calls.append({"kernel": kernel, "grid": grid, "block": block, "shared": shared,
                      "stream": stream, "args": args})

    monkeypatch.setattr(launcher, "launch", fake_launch)
    return calls


def build(task, source=RMSNORM_CUDA, recorder=None):
    recorder = recorder or CudaLaunchRecorder()
    program = Program(parse_spec(source), task, recorder)
    program.module = type("M", (), {"kernels": {k: k for k in program.signatures}})()
    cls = model_class(program, task)
    torch.manual_seed(77)
    model = cls(*make_init_inputs(task, SHAPE))
    return model, recorder


def test_forward_binds_inputs_and_the_reference_models_parameters(rmsnorm, launches):
    model, recorder = build(rmsnorm)
    torch.manual_seed(77)
    reference = rmsnorm.Model(*make_init_inputs(rmsnorm, SHAPE))
    assert torch.equal(model.tensors["weight"], reference.weight.detach())  # same draws
    assert model.values["eps"] == 1e-6
    (x,) = make_inputs(rmsnorm, SHAPE, seed=3)
    y = model(x)
    assert type(y) is torch.Tensor and y.shape == x.shape and y.dtype == torch.bfloat16
    (call,) = launches
    assert call["kernel"] == "rmsnorm_rows" and call["grid"] == (7, 1, 1)
    assert call["block"] == (128, 1, 1) and call["shared"] == 0 and call["stream"] == 0
    assert call["args"] == [("c_void_p", x.data_ptr()), ("c_void_p", model.tensors["weight"].data_ptr()),
                            ("c_void_p", y.data_ptr()), ("c_int32", 300), ("c_float", 1e-6)]
    assert recorder.total == 1 and dict(recorder.launches) == {"rmsnorm_rows": 1}
    model(x)
    assert len(model.plans) == 1  # the plan is reused for the same shapes


def test_ghost_replay_counts_launches_but_skips_them(rmsnorm, launches):
    model, recorder = build(rmsnorm)
    recorder.ghost = True
    model(*make_inputs(rmsnorm, SHAPE, seed=3))
    assert launches == [] and recorder.total == 1


def test_the_op_policy_is_suspended_around_the_harness_host_code(rmsnorm, launches):
    model, recorder = build(rmsnorm)
    seen = []
    recorder.on_enter, recorder.on_exit = (lambda: seen.append("enter")), (lambda: seen.append("exit"))
    model(*make_inputs(rmsnorm, SHAPE, seed=3))
    assert seen == ["enter", "exit"]


def test_guard_bands_surround_each_buffer_and_the_judge_finds_a_write_past_the_end(
        rmsnorm, launches, tmp_path, monkeypatch):
    from evotui.eval.failures import bands_damaged as _bands_damaged
    from evotui.eval.judge import Judge, Reject
    from evotui.eval.protocol import dump_tensor

    source = RMSNORM_CUDA.replace(
        'OUTPUTS = [{"name": "y", "like": "x"}]',
        'OUTPUTS = [{"name": "y", "like": "x"}]\nSCRATCH = [{"name": "partial", "shape": ["M"], '
        '"dtype": "float32"}]')
    model, recorder = build(rmsnorm, source)
    recorder.arm_guards(1234)
    y = model(*make_inputs(rmsnorm, SHAPE, seed=3))
    bands = recorder.take_guards()
    assert recorder.guard_seed is None
    assert [label for label, _ in bands] == ["y", "y", "partial", "partial"]
    for k, (_, band) in enumerate(bands):
        assert torch.equal(band, guards.pattern(1234, k))
    assert y.untyped_storage().nbytes() == y.numel() * 2 + 2 * guards.GUARD_BYTES
    assert y.data_ptr() % 256 == bands[0][1].data_ptr() % 256  # alignment kept

    def report(bands):
        return [{"label": label, **dump_tensor(band.clone(), tmp_path / f"g{k}.bin")}
                for k, (label, band) in enumerate(bands)]

    judge = Judge("cpu")
    judge._check_guards(1234, report(bands), 1, "trial 1")  # untouched: fine
    assert not _bands_damaged(bands, 1234)
    # a kernel's stray store of 4 bytes just past the end of y
    ctypes.memmove(y.data_ptr() + y.numel() * y.element_size(), b"\x00\x00\x80\x3f", 4)
    # the worker then skips timing (an exact-size buffer would take the stray store next)
    assert _bands_damaged(bands, 1234)
    with pytest.raises(Reject) as e:
        judge._check_guards(1234, report(bands), 1, "trial 1")
    assert e.value.reason == reasons.OUT_OF_BOUNDS
    assert "bytes after `y`" in e.value.message and "+0" in e.value.message
    with pytest.raises(Reject) as e:
        judge._check_guards(1234, [], 1, "trial 1")
    assert e.value.reason == reasons.TAMPERED


def test_without_guards_scratch_is_zeroed_and_outputs_are_plain(rmsnorm, launches):
    source = RMSNORM_CUDA.replace(
        'OUTPUTS = [{"name": "y", "like": "x"}]',
        'OUTPUTS = [{"name": "y", "like": "x"}, {"name": "inv", "shape": ["M"], "dtype": "float32"}]'
        '\nSCRATCH = [{"name": "partial", "shape": ["M", "cdiv(N, BLOCK)"], "dtype": "x"}]')
    source = source.replace('"args": ["x", "weight", "y", "N", "eps"]',
                            '"args": ["x", "weight", "y", "N", "eps"]},\n'
                            '    {"kernel": "rmsnorm_rows", "grid": ["M", 2], "block": ["BLOCK", 1, 1],'
                            ' "shared_mem": "BLOCK * 4", "args": ["x", "weight", "partial", "N", "0.5"]')
    model, recorder = build(rmsnorm, source)
    y, inv = model(*make_inputs(rmsnorm, SHAPE, seed=3))
    assert inv.shape == (7,) and inv.dtype == torch.float32 and y.untyped_storage().nbytes() == 7 * 300 * 2
    first, second = launches
    assert second["grid"] == (7, 2, 1) and second["shared"] == 512
    assert second["args"][4] == ("c_float", 0.5) and recorder.total == 2


@pytest.mark.parametrize(("old", "new", "error", "words"), [
    ('"args": ["x", "weight", "y", "N", "eps"]', '"args": ["x", "weight", "y", "N", "epsilon"]',
     CandidateError, "unknown names ['epsilon']"),
    ('const unsigned short* __restrict__ x,', 'const float* __restrict__ x,', ExprError,
     "`x` is bfloat16 but the kernel takes `float* x`"),
    ('"grid": ["M"]', '"grid": ["M - M"]', ExprError, "grid dimension 0 is 0"),
    ('"block": ["BLOCK"]', '"block": ["4096"]', ExprError, "block dimension 0 is 4096"),
    ('"args": ["x", "weight", "y", "N", "eps"]', '"args": ["x", "weight", "y", "eps", "eps"]',
     ExprError, "is an integer"),
    ('SYMBOLS = {"N": "size(x, -1)", "M": "numel(x) // N"}', 'SYMBOLS = {"N": "size(x, 5)", "M": "1"}',
     ExprError, "out of range"),
    ('SYMBOLS = {"N"', 'SYMBOLS = {"x"', CandidateError, "forward arguments"),
    ('SYMBOLS = {"N"', 'SYMBOLS = {"weight": "1", "N"', CandidateError, "names of the task's Model"),
])
def test_mistakes_are_reported_in_the_candidates_terms(rmsnorm, launches, old, new, error, words):
    source = RMSNORM_CUDA.replace(old, new)
    assert source != RMSNORM_CUDA
    with pytest.raises(error, match=__import__("re").escape(words)):
        model, _ = build(rmsnorm, source)
        model(*make_inputs(rmsnorm, SHAPE, seed=3))


def test_half_and_bfloat16_scalars_travel_as_their_bits():
    from evotui.dialects.cuda.device_code import Param
    from evotui.dialects.cuda.model import _scalar

    assert _scalar(Param("h", "__half", False), 1.0, "") == ("c_uint16", 0x3C00)
    assert _scalar(Param("b", "__nv_bfloat16", False), -2.0, "") == ("c_uint16", 0xC000)
    assert _scalar(Param("n", "size_t", False), 3.0, "") == ("c_uint64", 3)
    assert _scalar(Param("f", "double", False), 3, "") == ("c_double", 3.0)


def test_launch_refuses_configurations_the_kernel_cannot_take():
    handle = launcher.KernelHandle("k", None, max_threads=256, static_shared=1024)
    with pytest.raises(launcher.LaunchError, match="at most 256"):
        launcher.launch(handle, (1, 1, 1), (512, 1, 1), 0, 0, [], 232448)
    with pytest.raises(launcher.LaunchError, match="shared memory"):
        launcher.launch(handle, (1, 1, 1), (128, 1, 1), 232000, 0, [], 232448)


# -- device facts, sanitizer, task loader --------------------------------------------------
def test_device_facts_degrade_without_a_gpu(monkeypatch):
    facts = device.query(0)
    if facts.available:  # pragma: no cover - a GPU machine
        assert facts.arch.startswith("sm_") and facts.sms > 0
        return
    assert facts.error and facts.arch == ""
    monkeypatch.delenv("EVOTUI_CUDA_ARCH", raising=False)
    assert device.compile_arch() == device.DEFAULT_ARCH == "sm_90"
    monkeypatch.setenv("EVOTUI_CUDA_ARCH", "sm_80")
    assert device.compile_arch() == "sm_80"
    assert set(facts.as_dict()) >= {"name", "arch", "sms", "l2_bytes", "bandwidth_bytes_per_s"}


MEMCHECK_LOG = """========= COMPUTE-SANITIZER
========= Invalid __global__ write of size 4 bytes
=========     at softmax_rows+0x3a0
=========     by thread (0,0,0) in block (999,0,0)
=========     Address 0x7f2a4c0bb9a4 is out of bounds
=========     Saved host backtrace up to driver entry point at kernel launch time
=========     Host Frame: [0x2dfb3f] in libcuda.so.1
sanitize_run: the call failed: RuntimeError: CUDA error: unspecified launch failure
========= ERROR SUMMARY: 1 error
"""


def test_sanitizer_verdicts_come_from_the_exit_code_and_summary():
    bad = sanitizer.parse("memcheck", sanitizer.ERROR_EXIT, MEMCHECK_LOG, 12.0)
    assert bad.ran and not bad.ok and bad.errors == 1
    assert "Invalid __global__ write of size 4 bytes" in bad.message and "out of bounds" in bad.message
    good = sanitizer.parse("memcheck", 0, "========= COMPUTE-SANITIZER\nok\n"
                           "========= ERROR SUMMARY: 0 errors\n", 9.0)
    assert good.ran and good.ok
    forged = sanitizer.parse("memcheck", 0, "ERROR SUMMARY: 0 errors\n"  # the candidate's printf
                             "========= ERROR SUMMARY: 2 errors\n", 9.0)
    assert not forged.ok and forged.errors == 2
    broken = sanitizer.parse("memcheck", 3, "sanitize_run: cannot build the candidate\n", 1.0)
    assert not broken.ran and not broken.ok  # not the candidate's verdict
    missing = sanitizer.run("t.py", "c.py", executable=None) if sanitizer.find() is None else None
    if missing is not None:
        assert not missing.ran and "not found" in missing.message


def test_a_cpu_pool_does_not_sanitize(cpu_pool, softmax_task):
    assert cpu_pool.sanitize(softmax_task, (SAMPLES / "softmax" / "seed_cuda.py").read_text()) is None


def test_the_task_loader_never_takes_a_cuda_seed_for_the_task(tmp_path):
    task = resolve_task(SAMPLES / "softmax")
    assert task.path.name == "task.py" and task.seed_path.name == "seed.py"
    folder = tmp_path / "t"
    folder.mkdir()
    shutil.copy(SAMPLES / "softmax" / "task.py", folder / "softmax_task.py")
    shutil.copy(SAMPLES / "softmax" / "seed_cuda.py", folder / "seed_cuda.py")
    only_cuda = resolve_task(folder)
    assert only_cuda.path.name == "softmax_task.py" and only_cuda.seed_path.name == "seed_cuda.py"


def test_in_a_checked_call_the_harness_buffers_start_poisoned(rmsnorm, launches):
    """The adapter allocates its output with the policy suspended (all its host code is the
    harness's); the allocation is still poisoned, so an output the kernel never writes reads
    as NaN (unwritten_output), not as an earlier result left in the allocator."""
    from evotui.eval.op_policy import OpPolicy

    model, recorder = build(rmsnorm)
    policy = OpPolicy(poison=True)
    recorder.on_enter, recorder.on_exit = policy.enter_kernel, policy.exit_kernel
    inputs = make_inputs(rmsnorm, SHAPE, seed=3)
    with policy:
        y = model(*inputs)  # the fake launch writes nothing
    assert torch.isnan(y.float()).all() and y.view(torch.int16).eq(-1).all()
    assert not policy.violations


def test_the_weights_a_cuda_model_holds_are_guarded(rmsnorm, launches):
    """A kernel that writes into the task's weights (a candidate once laundered the address
    past the PTX rules) is seen between timed calls: the guard knows the harness-built model's weights."""
    from evotui.eval.weight_guard import WeightGuard

    model, _ = build(rmsnorm)
    guard = WeightGuard(model)
    assert [t.data_ptr() for t in guard.params] == [model.tensors["weight"].data_ptr()]
    guard.check()
    assert guard.changed_names() == []
    model.tensors["weight"].view(torch.int16)[0] ^= 1  # what the laundered store did
    guard.check()
    assert guard.changed_names() == ["weight"]
