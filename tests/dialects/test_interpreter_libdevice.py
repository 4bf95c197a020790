"""libdevice functions under Triton's CPU interpreter compute what a GPU computes.

In Triton 3.9 they were stubs there that returned None (``libdevice.tanh(x)`` was None), so
honest kernels using them failed on the CPU; ``interpreter_libdevice`` (applied by
``apply_interpreter_fixes``) computes them in numpy. The kernel runs in a fresh process
(TRITON_INTERPRET=1 must be set before triton is imported) and is compared with torch.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

KERNEL = r'''
import json
import torch, triton, triton.language as tl
from evotui.dialects.triton.interpreter_fixes import apply_interpreter_fixes

apply_interpreter_fixes()
from triton.language.extra import libdevice
from triton.language.extra.cuda import libdevice as cuda_libdevice


@triton.jit
def k(x_ptr, y_ptr, N: tl.constexpr):
    c = tl.arange(0, N)
    x = tl.load(x_ptr + c)
    y = (libdevice.tanh(x) + libdevice.erf(x) * libdevice.rsqrt(tl.abs(x) + 1.0)
         + cuda_libdevice.pow(tl.abs(x), 1.5) + libdevice.fma(x, x, 2.0))
    tl.store(y_ptr + c, y)


errors = {}
for name in ("float32", "bfloat16"):
    torch.manual_seed(0)
    x = torch.randn(64).to(getattr(torch, name))
    y = torch.full_like(x, float("nan"))
    k[(1,)](x, y, N=64)
    f = x.float()
    ref = torch.tanh(f) + torch.erf(f) * torch.rsqrt(f.abs() + 1) + f.abs() ** 1.5 + (f * f + 2)
    errors[name] = (y.float() - ref).abs().max().item() / ref.abs().max().item()
print(json.dumps(errors))
'''


@pytest.fixture(scope="module")
def errors() -> dict[str, float]:
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", KERNEL], env=env, capture_output=True,
                          text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_libdevice_functions_compute_in_fp32_as_torch_does(errors):
    assert errors["float32"] < 1e-6


def test_libdevice_functions_on_bf16_round_to_bf16(errors):
    assert errors["bfloat16"] < 2e-2  # a few bf16 roundings (2**-8 each) over five operations
