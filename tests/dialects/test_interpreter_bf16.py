"""bf16 arithmetic under Triton's CPU interpreter computes what a GPU computes.

Triton 3.9's interpreter applied numpy's operators to bf16's raw 16-bit patterns (`a + b`
added integers, `a < b` compared patterns, `tl.sum` summed integers), so honest bf16
kernels failed on the CPU; ``interpreter_bf16`` (applied by ``apply_interpreter_fixes``)
computes them in fp32 and rounds to bf16. Small kernels run under the interpreter in a
fresh process (TRITON_INTERPRET=1 must be set before triton is imported, and the fixes
patch the interpreter) and are compared with torch on the same bf16 values.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch

from evotui.eval import EvalRequest
from tests.conftest import CANDIDATES, ROOT, SAMPLES

KERNELS = r'''
import json
import torch, triton, triton.language as tl
from evotui.dialects.triton.interpreter_fixes import apply_interpreter_fixes

apply_interpreter_fixes()

@triton.jit
def k(a_ptr, b_ptr, y_ptr, N: tl.constexpr, OP: tl.constexpr):
    r = tl.arange(0, 4)[:, None]
    c = tl.arange(0, N)[None, :]
    a = tl.load(a_ptr + r * N + c)
    b = tl.load(b_ptr + r * N + c)
    if OP == "add":
        y = a + b
    elif OP == "sub":
        y = a - b
    elif OP == "mul":
        y = a * b
    elif OP == "neg":
        y = -a
    elif OP == "where":
        y = tl.where(a > b, a, b)
    elif OP == "equal":
        y = tl.where(a == b, 1.0, 0.0).to(tl.bfloat16)
    elif OP == "maximum":
        y = tl.maximum(a, 0.0)
    elif OP == "minimum":
        y = tl.minimum(a, b)
    elif OP == "scalar_mul":
        y = a * 2.0
    elif OP == "scalar_add":
        y = a + 1
    elif OP == "argmax":
        y = (tl.argmax(a, axis=1)[:, None] + tl.zeros([4, N], tl.int32)).to(tl.bfloat16)
    elif OP == "int_cast":
        y = (a * 100.0).to(tl.int32).to(tl.bfloat16)
    else:  # sum
        y = tl.sum(a, axis=1, keep_dims=True) + tl.zeros([4, N], tl.bfloat16)
    tl.store(y_ptr + r * N + c, y)

N = 32
g = torch.Generator().manual_seed(0)
a = torch.randn(4, N, generator=g).bfloat16()
b = torch.randn(4, N, generator=g).bfloat16()
a[0, :4] = torch.tensor([0.0, -0.0, 1.5, -2.0])  # signed zeros, equal values
b[0, :4] = torch.tensor([-0.0, 0.0, 1.5, -2.0])
refs = {
    "add": a + b, "sub": a - b, "mul": a * b, "neg": -a, "where": torch.where(a > b, a, b),
    "equal": (a == b).bfloat16(), "maximum": a.clamp_min(0.0), "minimum": torch.minimum(a, b),
    "scalar_mul": a * 2.0, "scalar_add": a + 1,
    "argmax": a.float().argmax(1, keepdim=True).bfloat16().expand(4, N),
    "int_cast": (a * 100.0).int().bfloat16(),
    "sum": a.float().sum(1, keepdim=True).bfloat16().expand(4, N),
}
out = {}
for op, ref in refs.items():
    y = torch.empty(4, N, dtype=torch.bfloat16)
    k[(1,)](a, b, y, N=N, OP=op)
    out[op] = {"exact": torch.equal(y, ref), "max_err": (y.float() - ref.float()).abs().max().item(),
               "scale": a.float().abs().sum(1).max().item()}
out["reapplied"] = apply_interpreter_fixes()
print(json.dumps(out))
'''

EXACT = ["add", "sub", "mul", "neg", "where", "equal", "maximum", "minimum", "scalar_mul",
         "scalar_add", "argmax", "int_cast"]


@pytest.fixture(scope="module")
def interpreted():
    env = {**os.environ, "TRITON_INTERPRET": "1", "CUDA_VISIBLE_DEVICES": "",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, "-c", KERNELS], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("op", EXACT)
def test_bf16_elementwise_ops_match_torch_exactly(interpreted, op):
    # a GPU rounds each bf16 op to nearest even, as torch does on the CPU
    assert interpreted[op]["exact"], interpreted[op]


def test_bf16_sum_is_within_bf16_accumulation_error(interpreted):
    # tl.sum of bf16 adds in bf16 on a GPU (Triton widens only small integers), so it may
    # differ from torch's fp32-accumulated sum by a few bf16 roundings, never by garbage
    result = interpreted["sum"]
    assert result["max_err"] <= 2 ** -6 * result["scale"], result


def test_the_fixes_are_applied_once(interpreted):
    assert not any("bf16" in what for what in interpreted["reapplied"]), interpreted["reapplied"]


def test_rounding_to_bf16_matches_torch():
    from evotui.dialects.triton.interpreter_bf16 import to_bf16, to_f32

    rng = np.random.default_rng(0)
    bits = rng.integers(0, 2 ** 32, 20000, dtype=np.uint64).astype(np.uint32)
    bits[:8] = [0x3F808000, 0x3F818000, 0x7F7FFFFF, 0xFF7FFFFF, 0x00008000, 0x7F800000,
                0x7FC00001, 0x80000000]  # ties both ways, overflow to inf, subnormal, inf, nan
    values = bits.view(np.float32)
    want = torch.from_numpy(values.copy()).bfloat16().float().numpy()
    assert np.array_equal(to_f32(to_bf16(values)), want, equal_nan=True)


def test_honest_bf16_arithmetic_candidate_is_accepted(cpu_pool):
    from evotui.task.model import resolve_task

    source = (CANDIDATES / "add_gelu" / "honest_bf16_arithmetic.py").read_text()
    result = cpu_pool.evaluate(EvalRequest(task=resolve_task(SAMPLES / "add_gelu"),
                                           source=source, name="honest_bf16_arithmetic.py"))
    assert result.accepted, (result.reason, result.message)
