"""What a candidate leaves behind in its worker: replaced harness code is found by identity."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.conftest import ROOT


def _run(body: str) -> str:
    code = textwrap.dedent('''
        import torch
        import evotui.eval.candidate_runner  # noqa: F401  (harness_code reads its names)
        from evotui.eval.leftovers import harness_code, replaced
        before = harness_code()
    ''') + textwrap.dedent(body)
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.strip()


def test_nothing_is_replaced_when_nothing_changed():
    assert _run("print(replaced(before, harness_code()))") == "[]"


def test_a_name_set_on_tensor_that_shadows_a_base_method_is_a_replacement():
    """`size` lives on torch._C.TensorBase: setting it on torch.Tensor adds a new key to
    Tensor's own dict, yet replaces what `tensor.size()` runs."""
    out = _run('''
        torch.Tensor.size = lambda self: 3
        print(replaced(before, harness_code()))
    ''')
    assert out == "['Tensor.size']"


def test_a_replaced_torch_function_and_harness_constant_are_named():
    out = _run('''
        import evotui.eval.perturb as perturb
        torch.nn.functional.softmax = lambda *a, **k: None
        perturb.perturb = lambda *a, **k: None
        print(sorted(replaced(before, harness_code())))
    ''')
    assert "torch.nn.functional.softmax" in out and "evotui.eval.perturb.perturb" in out
