"""What a confined process may run and read, on the CPU and on a GPU lane (simulated here:
the grants differ, not the GPU)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from evotui.eval.sandbox import probe, run_isolated
from evotui.eval.sandbox.policy import Confinement, default_limits

pytestmark = pytest.mark.skipif(not probe().complete,
                                reason=f"this kernel cannot sandbox: {probe().missing()}")


def _programs(_: object) -> dict[str, object]:
    Path("k.c").write_text("int f(void) { return 1; }\n")
    out: dict[str, object] = {}
    for name, argv in (("gcc", ["gcc", "-shared", "-fPIC", "k.c", "-o", "k.so"]),
                       ("sh", ["/bin/sh", "-c", "true"])):
        try:
            out[name] = subprocess.run(argv, capture_output=True).returncode
        except OSError as e:
            out[name] = type(e).__name__
    return out


def _confined(tmp_path: Path, gpu: str | None) -> dict[str, object]:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    outcome = run_isolated(lambda: None, _programs,
                           Confinement(str(scratch), gpu=gpu,
                                       limits=default_limits(60, gpu is not None)), 60)
    assert outcome.answer is not None, outcome
    return outcome.answer


@pytest.mark.skipif(shutil.which("gcc") is None, reason="no C compiler here")
def test_a_gpu_lane_runs_the_compiler_and_nothing_else(tmp_path):
    assert _confined(tmp_path, gpu="0") == {"gcc": 0, "sh": "PermissionError"}


def test_a_cpu_lane_runs_no_program_at_all(tmp_path):
    ran = _confined(tmp_path, gpu=None)
    assert ran["sh"] == "PermissionError"
    assert ran["gcc"] in ("PermissionError", "FileNotFoundError")


def test_no_folder_holding_a_protected_path_is_readable(tmp_path):
    task = Path(__file__).resolve().parents[2] / "sample_kernels" / "softmax" / "task.py"
    grants = Confinement(str(tmp_path), gpu=None, protected=(str(task), str(Path.home()))).grants()
    readable = [Path(g.path).resolve() for g in grants]
    assert not any(task.resolve().is_relative_to(p) for p in readable if p != tmp_path)
    assert not any(Path.home().resolve().is_relative_to(p) for p in readable)
