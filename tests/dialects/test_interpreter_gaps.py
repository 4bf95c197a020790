"""Triton's CPU interpreter runs what a GPU runs (``apply_interpreter_fixes`` and
``isolate_kernel_globals``, as the worker applies them), for code honest kernels write:

- a float argument is an fp32 scalar, as a GPU launch makes it: ``eps.to(tl.float32)``
  works, and a bf16 block times it is fp32;
- ``and`` / ``or`` between blocks are ``logical_and`` / ``logical_or`` (FlagGems'
  ``row_mask and col_mask``): Python's took a block as true and kept only the right side;
  a constexpr operand still short-circuits, as Triton's compiler folds it;
- a module-level alias of a Triton builtin (``triton_cast = tl.cast``) can be called.

The kernels run in a fresh process (TRITON_INTERPRET=1 must be set before triton is imported),
from a file (the interpreter rewrites a kernel from its source).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

KERNELS = r'''
import json
import torch, triton, triton.language as tl
from triton.language import cast as imported_cast
from evotui.dialects.triton.interpreter_fixes import apply_interpreter_fixes
from evotui.dialects.triton.interpreter_globals import isolate_kernel_globals

apply_interpreter_fixes()
isolate_kernel_globals()
triton_cast = tl.cast
triton_rsqrt = tl.math.rsqrt


@triton.jit
def scalar_to(x_ptr, y_ptr, eps, N: tl.constexpr):
    c = tl.arange(0, N)
    x = tl.load(x_ptr + c)
    e = eps.to(tl.float32)
    y = x * eps  # bf16 block * fp32 scalar: fp32, as on a GPU
    tl.static_assert(y.dtype == tl.float32)
    tl.store(y_ptr + c, y + e)


@triton.jit
def masks(x_ptr, y_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr, FLAG: tl.constexpr):
    rows = tl.arange(0, BM)[:, None]
    cols = tl.arange(0, BN)[None, :]
    inside = (rows < M) and (cols < N)
    edge = (rows == 0) or (cols == 0)
    folded = FLAG and (1 // 0)  # a false constexpr: the right side is never evaluated
    kept = (rows < M) and True  # a true constexpr drops out
    x = tl.load(x_ptr + rows * N + cols, mask=inside and kept, other=0.0)
    y = tl.where(edge, -x, x)
    if not folded:
        tl.store(y_ptr + rows * N + cols, y, mask=inside)


@triton.jit
def aliases(x_ptr, y_ptr, N: tl.constexpr):
    c = tl.arange(0, N)
    x = tl.load(x_ptr + c)
    y = triton_rsqrt(triton_cast(x, tl.float32)) + imported_cast(x, tl.float32)
    tl.store(y_ptr + c, y)


out = {}
x = torch.rand(64, dtype=torch.bfloat16) + 0.5
y = torch.empty(64, dtype=torch.float32)
scalar_to[(1,)](x, y, 0.25, N=64)
out["scalar_to"] = (y - (x.float() * 0.25 + 0.25)).abs().max().item()

M, N = 5, 6
x = torch.randn(M, N)
y = torch.full((M + 3, N + 2), 7.0)  # room past the rows and columns: must stay 7
masks[(1,)](x, y, M, N, BM=8, BN=8, FLAG=False)
ref = x.clone()
ref[0, :] = -x[0, :]
ref[:, 0] = -x[:, 0]
got = y.view(-1)[: M * N].view(M, N)
out["masks"] = (got - ref).abs().max().item()
out["untouched"] = bool((y.view(-1)[M * N:] == 7.0).all())

x = torch.rand(64) + 0.5
y = torch.empty(64)
aliases[(1,)](x, y, N=64)
out["aliases"] = (y - (torch.rsqrt(x) + x)).abs().max().item()
print(json.dumps(out))
'''


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict:
    script = tmp_path_factory.mktemp("interpreter_gaps") / "kernels.py"
    script.write_text(KERNELS)
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True,
                          text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_float_argument_is_an_fp32_scalar(results):
    assert results["scalar_to"] < 1e-6


def test_and_or_between_blocks_are_logical(results):
    assert results["masks"] == 0.0
    assert results["untouched"]  # nothing stored past the row or column masks


def test_aliases_of_triton_builtins_can_be_called(results):
    assert results["aliases"] < 1e-5
