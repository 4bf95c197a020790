"""CUDA candidates through the CPU pipeline: NVRTC compiles (success and failure) in CI,
``evotui bench`` and the pool report ``compile_error`` with NVRTC's log and ``needs_gpu``
on the CPU, the parameter mutator moves BLOCK and the child still compiles, the dialect's
prompts, and compute-sanitizer verdicts in the engine."""

from __future__ import annotations

import asyncio
import json
import random
import re
import subprocess
import sys

import pytest

from evotui.dialects import get_backend
from evotui.dialects.cuda import compiler
from evotui.dialects.cuda.sanitizer import SanitizerReport
from evotui.dialects.cuda.spec import parse_spec
from evotui.dialects.cuda.static_rules import check_source
from evotui.engine.loop import Engine
from evotui.engine.param_mutator import ParamMutator
from evotui.engine.patch import extract_program
from evotui.engine.prompting import PromptBuilder
from evotui.engine.state import EngineConfig
from evotui.engine.tunables import find_tunables
from evotui.eval import EvalRequest
from evotui.eval.results import EvalResult
from tests.conftest import ROOT, SAMPLES
from tests.engine_helpers import FakeEvaluator, ScriptedMutator, tagged

NVRTC, WHY = compiler.available()
needs_nvrtc = pytest.mark.skipif(not NVRTC, reason=f"NVRTC unavailable: {WHY}")
SOFTMAX_CUDA = (SAMPLES / "softmax" / "seed_cuda.py").read_text()
RMSNORM_CUDA = (SAMPLES / "rmsnorm" / "seed_cuda.py").read_text()
BROKEN = SOFTMAX_CUDA.replace("yr[c] = expf(xr[c] - m) * inv;", "yr[c] = expf(xr[c] - m) * inverse;")


def compile_spec(source: str, arch: str = "sm_90") -> tuple[str, str]:
    spec = parse_spec(source)
    return compiler.compile_isolated(compiler.CompileRequest(
        spec.cuda_source, arch, tuple(sorted(spec.constants.items())), spec.options,
        tuple(sorted({x.kernel for x in spec.launches}))))


@needs_nvrtc
@pytest.mark.parametrize("source", [SOFTMAX_CUDA, RMSNORM_CUDA], ids=["softmax", "rmsnorm"])
def test_the_seeds_compile_with_nvrtc(source):
    assert compile_spec(source) == ("ok", "")
    spec = parse_spec(source)
    cubin = compiler.compile_cubin(compiler.CompileRequest(
        spec.cuda_source, "sm_90", tuple(spec.constants.items()), (), (spec.launches[0].kernel,)))
    assert cubin[:4] == b"\x7fELF"


@needs_nvrtc
def test_the_gpu_test_candidates_pass_the_rules_and_compile():
    from tests.conftest import CANDIDATES
    from tests.cuda_faults import CHECKED, GPU_ONLY

    files = {p.stem: p.read_text() for p in sorted((CANDIDATES / "cuda").glob("*.py"))}
    for name, source in {**files, **CHECKED, **GPU_ONLY}.items():
        if "#include" in source and not compiler.include_dirs():
            continue  # no CUDA headers on this machine
        issue = check_source(source)
        compiled = get_backend("cuda").precheck(source, "sm_90")
        # the source rules and the PTX rules both refuse a cheat, but for those only a GPU run
        # tells from honest kernels
        if name.startswith("cheat_") and name not in GPU_ONLY:
            assert issue is not None and issue.reason == "forbidden_construct", name
            assert compiled is not None and compiled.reason == "forbidden_construct", name
        else:
            assert issue is None, (name, issue)
            assert compiled is None, (name, compiled)


@needs_nvrtc
def test_compile_errors_carry_nvrtcs_log_with_cuda_source_lines():
    status, log = compile_spec(BROKEN)
    assert status == "compile_error"
    assert 'identifier "inverse" is undefined' in log and "CUDA_SOURCE line 61" in log
    assert len(log) <= compiler.MAX_LOG_CHARS
    # the tunables are -D defines: a BLOCK the code does not define is an error too
    status, log = compile_spec(SOFTMAX_CUDA.replace("__launch_bounds__(BLOCK)",
                                                    "__launch_bounds__(WIDTH)"))
    assert status == "compile_error" and "WIDTH" in log


@needs_nvrtc
def test_a_kernel_hidden_behind_the_preprocessor_is_reported():
    source = SOFTMAX_CUDA.replace('extern "C" __global__ void __launch_bounds__(BLOCK)',
                                  '#if 0\nextern "C" __global__ void __launch_bounds__(BLOCK)\n#endif\n'
                                  'extern "C" __global__ void __launch_bounds__(BLOCK)\nsoftmax_other'
                                  '(const float* __restrict__ x, float* __restrict__ y, int n_cols, '
                                  'long long row_stride) {}\n__global__ void')
    status, log = compile_spec(source)
    assert status == "compile_error" and "softmax_rows" in log and "not in the compiled module" in log


def test_the_log_trimmer_keeps_the_errors():
    log = "\n".join([f"/tmp/candidate.cu({i}): warning #177-D: unused" for i in range(50)]
                    + ["candidate.cu(7): error: expected a \";\"", "    x = 1", "    ^"])
    trimmed = compiler.trim_log(log)
    assert trimmed.startswith("CUDA_SOURCE line 7: error") and "warning" not in trimmed


@needs_nvrtc
def test_bench_reports_a_compile_error_as_json_and_exits_1(tmp_path):
    cand = tmp_path / "broken_cuda.py"
    cand.write_text(BROKEN)
    p = subprocess.run([sys.executable, "-m", "evotui", "bench", str(SAMPLES / "softmax"), str(cand),
                        "--device", "cpu", "--json"], capture_output=True, text=True, timeout=120,
                       cwd=ROOT)
    assert p.returncode == 1, p.stderr
    report = json.loads(p.stdout.strip().splitlines()[-1])
    assert report["accepted"] is False and report["reason"] == "compile_error"
    assert 'identifier "inverse" is undefined' in report["message"]
    assert report["description"] == "the device code does not compile"


@needs_nvrtc
def test_the_pool_compiles_before_any_worker_and_says_cuda_needs_a_gpu(cpu_pool, softmax_task):
    broken = cpu_pool.evaluate(EvalRequest(task=softmax_task, source=BROKEN))
    assert broken.reason == "compile_error" and "inverse" in broken.message
    assert broken.wall_s < 30
    seed = cpu_pool.evaluate(EvalRequest(task=softmax_task, source=SOFTMAX_CUDA))
    assert not seed.accepted and seed.reason == "needs_gpu" and "GPU" in seed.message
    cheat = SOFTMAX_CUDA.replace("__shared__ float red[32];",
                                 "__shared__ float red[32]; long long t0 = clock64(); (void)t0;")
    assert cpu_pool.evaluate(EvalRequest(task=softmax_task, source=cheat)).reason == \
        "forbidden_construct"
    # and the pool still serves Triton candidates
    triton = cpu_pool.evaluate(EvalRequest(task=softmax_task,
                                           source=(SAMPLES / "softmax" / "seed.py").read_text()))
    assert triton.accepted, triton.message


@needs_nvrtc
def test_param_mutator_moves_block_and_the_child_still_compiles():
    (block,) = find_tunables(SOFTMAX_CUDA)
    assert block.name == "BLOCK" and block.value == 128 and block.choices == (64, 128, 256, 512, 1024)
    child = ParamMutator(max_changes=1).mutate(SOFTMAX_CUDA, random.Random(3))
    assert child is not None and set(child.changes) == {"BLOCK"}
    new = child.changes["BLOCK"][1]
    assert f"\nBLOCK = {new}\n" in child.source and new != 128
    assert check_source(child.source) is None
    assert compile_spec(child.source) == ("ok", "")
    assert parse_spec(child.source).constants["BLOCK"] == new


def test_the_cuda_dialect_prompt_and_full_program_replies():
    builder = PromptBuilder(get_backend("cuda").prompt_dir)
    system = builder.system()
    assert "CUDA_SOURCE" in system and "extern \"C\" __global__" in system
    assert "CUDA pitfalls" in system and "Tunables convention" in system
    assert "@triton.jit" not in system
    reply = ("I use 256 threads.\n```python\n"
             + SOFTMAX_CUDA.replace("BLOCK = 128", "BLOCK = 256") + "```\n")
    result = extract_program(reply, SOFTMAX_CUDA)
    assert result.source is not None and "BLOCK = 256" in result.source
    diff = ("<<<<<<< SEARCH\nBLOCK = 128\n=======\nBLOCK = 512\n>>>>>>> REPLACE\n")
    assert "BLOCK = 512" in extract_program(diff, SOFTMAX_CUDA).source


def test_a_cuda_seed_on_the_cpu_is_a_setup_error(tmp_path, monkeypatch):
    monkeypatch.setenv("EVOTUI_HOME", str(tmp_path / "home"))
    p = subprocess.run([sys.executable, "-m", "evotui", "run", str(SAMPLES / "softmax"), "--seed",
                        str(SAMPLES / "softmax" / "seed_cuda.py"), "--device", "cpu", "--headless",
                        "--mutator", "param", "--iterations", "2", "--out", str(tmp_path / "r")],
                       capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert p.returncode == 2 and "needs a GPU" in p.stderr, (p.stdout, p.stderr)


class SanitizingEvaluator(FakeEvaluator):
    """A GPU stand-in whose compute-sanitizer flags programs that say so."""

    def __init__(self) -> None:
        def judge(source: str) -> EvalResult:  # each variant faster than the last
            n = max([int(v) for v in re.findall(r"EVO_VARIANT_(\d+) ", source)] or [0])
            return EvalResult(True, "accepted", "ok", time_ms=1.0 - 0.1 * n, spread_pct=0.1)

        super().__init__(judge)
        self.sanitized: list[str] = []

    async def asanitize(self, task, source, timeout_s=600.0):
        self.sanitized.append(source)
        if "EVO_VARIANT_2 " in source:
            return SanitizerReport(True, False, "memcheck", 1,
                                   "memcheck: 1 error(s): Invalid __global__ write", 3.0)
        return SanitizerReport(True, True, "memcheck", 0, "memcheck: no errors", 3.0)


def test_the_engine_sanitizes_each_new_best_and_rejects_memory_errors(softmax_task):
    ev = SanitizingEvaluator()
    engine = Engine(softmax_task, ev, ScriptedMutator(tagged),
                    EngineConfig(iterations=3, concurrency=1), seed_source=SOFTMAX_CUDA)
    asyncio.run(engine.run())
    children = sorted((c for c in engine.population.candidates() if c.mutator != "seed"),
                      key=lambda c: c.id)
    reasons = [c.reason for c in children]
    assert "sanitizer_error" in reasons, reasons
    flagged = next(c for c in children if c.reason == "sanitizer_error")
    assert "Invalid __global__ write" in flagged.message and flagged.status == "rejected"
    assert len(ev.sanitized) == 4  # the seed and each child that would have been a new best
    assert engine.best.reason == "accepted" and "EVO_VARIANT_2 " not in engine.best.source
