"""Work that gives too few programs to fill a GPU is split: a reduction to a few values (a
loss: one value for the whole tensor) splits R, a product with few output tiles (a long K)
splits K; a second kernel combines the pieces and applies the epilogue. Both paths compute
the reference; reductions that read one another (softmax's max, then its sum) are never
split."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from evotui.seed import derive_seed
from evotui.task.model import resolve_task
from tests.conftest import ROOT

KB = ROOT / "tests" / "kernelbench_style"

# in a fresh interpreter process: Triton reads TRITON_INTERPRET when a kernel is decorated
RUN = r"""
import json, sys, types
import torch
from evotui.seed import derive_seed
from evotui.task.model import load_module, resolve_task

out = {}
for path in sys.argv[1:]:
    task = resolve_task(path)
    seed = derive_seed(task)
    module = load_module(task.path, "reference")
    module.__dict__.update(task.shapes("cpu")[0])
    for min_programs in (512, 1):
        cand = types.ModuleType("cand")
        exec(compile(seed.source, "derived.py", "exec"), cand.__dict__)
        cand.MIN_PROGRAMS = min_programs  # what the parameter mutator changes
        seen = []
        for name, fn in list(vars(cand).items()):
            if hasattr(fn, "run") and name.endswith(("_kernel", "_partial", "_combine")):
                def counted(*args, _run=fn.run, _name=name, **kwargs):
                    seen.append(_name.rsplit("_", 1)[-1])
                    return _run(*args, **kwargs)
                fn.run = counted
        torch.manual_seed(0)
        ref = module.Model(*module.get_init_inputs())
        torch.manual_seed(0)
        new = cand.ModelNew(*module.get_init_inputs())
        torch.manual_seed(1)
        inputs = module.get_inputs()
        with torch.no_grad():
            want, got = ref(*inputs), new(*inputs)
        same = want.shape == got.shape and torch.allclose(got.double(), want.double(),
                                                          rtol=1e-4, atol=1e-4)
        out[f"{task.name} {min_programs}"] = [seen, bool(same)]
print(json.dumps(out))
"""


def test_too_few_programs_split_the_work_and_still_compute_the_reference():
    names = ["11_MSE_loss", "14_Gemm_BiasAdd_GELU"]
    p = subprocess.run([sys.executable, "-c", RUN, *(str(KB / f"{n}.py") for n in names)],
                       capture_output=True, text=True, cwd=ROOT, timeout=600,
                       env={**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT)})
    assert p.returncode == 0, p.stderr[-3000:]
    results = json.loads(p.stdout.strip().splitlines()[-1])
    for name in names:
        assert results[f"{name} 512"] == [["partial", "combine"], True], name
        assert results[f"{name} 1"] == [["kernel"], True], name  # MIN_PROGRAMS=1: never split


def test_split_is_a_knob_only_where_the_pieces_can_be_combined():
    def source(name: str) -> str:
        return derive_seed(resolve_task(KB / f"{name}.py")).source

    for name in ("11_MSE_loss", "12_Square_matmul"):
        assert '"MIN_PROGRAMS"' in source(name) and "_partial" in source(name), name
    for name in ("05_Softmax_last", "08_Argmin_last", "19_Frobenius_normalise"):
        text = source(name)  # max then sum; an argmin; a full-size output after a sum
        assert "MIN_PROGRAMS" not in text and "_partial" not in text, name
