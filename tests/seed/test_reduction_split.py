"""A reduction to a few values (a loss: one value for the whole tensor) gives too few
programs to fill a GPU: the derived seed splits R between programs and combines their
partial results in a second kernel. Both paths compute the reference; reductions that read
one another (softmax's max, then its sum) are never split."""

from __future__ import annotations

import types

import pytest
import torch

from evotui.seed import derive_seed
from evotui.task.model import load_module, resolve_task
from tests.conftest import ROOT

KB = ROOT / "tests" / "kernelbench_style"


def derived_module(name: str, monkeypatch) -> tuple[types.ModuleType, types.ModuleType]:
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    task = resolve_task(KB / f"{name}.py")
    seed = derive_seed(task)
    assert seed.ok, seed.reason
    module = load_module(task.path, "reference")
    module.__dict__.update(task.shapes("cpu")[0])
    cand = types.ModuleType("cand")
    exec(compile(seed.source, "derived.py", "exec"), cand.__dict__)
    return module, cand


def launches(cand: types.ModuleType, monkeypatch) -> list[str]:
    """The names of the kernels the candidate launches (wrapping each JIT function's run)."""
    seen: list[str] = []
    for name, fn in list(vars(cand).items()):
        if name.endswith(("_kernel", "_partial", "_combine")) and hasattr(fn, "run"):
            run = fn.run

            def counted(*args, _run=run, _name=name, **kwargs):
                seen.append(_name)
                return _run(*args, **kwargs)

            monkeypatch.setattr(fn, "run", counted)
    return seen


@pytest.mark.parametrize("min_programs, kernels", [(512, ["partial", "combine"]), (1, ["kernel"])])
def test_a_whole_tensor_loss_is_split_between_programs_and_still_the_reference(
        monkeypatch, min_programs, kernels):
    module, cand = derived_module("11_MSE_loss", monkeypatch)
    cand.MIN_PROGRAMS = min_programs  # what the parameter mutator changes
    seen = launches(cand, monkeypatch)
    torch.manual_seed(1)
    inputs = module.get_inputs()
    want = module.Model()(*inputs)
    got = cand.ModelNew()(*inputs)
    assert [name.rsplit("_", 1)[-1] for name in seen] == kernels
    assert got.shape == want.shape and torch.allclose(got.double(), want.double(), rtol=1e-5)


def test_split_is_a_knob_only_where_reductions_can_be_combined():
    def knobs(name: str) -> str:
        return derive_seed(resolve_task(KB / f"{name}.py")).source

    assert '"MIN_PROGRAMS"' in knobs("11_MSE_loss")
    for name in ("05_Softmax_last", "08_Argmin_last", "19_Frobenius_normalise"):
        source = knobs(name)  # max then sum; an argmin; a full-size output after a sum
        assert "MIN_PROGRAMS" not in source and "_partial" not in source, name
