"""Static rules for CUDA candidates' device code, and their launch specs against the kernels'
parameter lists (no compiler, no GPU)."""

from __future__ import annotations

import pytest

from backends.cuda_backend.spec import SpecError, parse_spec
from backends.cuda_backend.static_rules import check_source
from tests.conftest import SAMPLES

KERNEL = '''
extern "C" __global__ void k(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    BODY
}
'''
SPEC = '''
BLOCK = 256
OUTPUTS = [{"name": "y", "like": "x"}]
LAUNCH = [{"kernel": "k", "grid": ["cdiv(numel(x), BLOCK)"], "block": ["BLOCK"],
           "args": ["x", "y", "numel(x)"]}]
'''


def candidate(device_code: str, spec: str = SPEC) -> str:
    return f'CUDA_SOURCE = r"""{device_code}"""\n{spec}'


def with_body(body: str, prelude: str = "") -> str:
    return candidate(prelude + KERNEL.replace("BODY", body))


def test_both_seeds_pass():
    for name in ("softmax", "rmsnorm"):
        assert check_source((SAMPLES / name / "seed_cuda.py").read_text()) is None


def test_the_prompt_example_passes():
    from backends.cuda_backend import CudaBackend

    text = (CudaBackend.prompt_dir / "system.md").read_text()
    example = text.split("```python\n", 1)[1].split("```", 1)[0]
    assert check_source(example) is None


@pytest.mark.parametrize(("prelude", "body", "reason", "words"), [
    ("", "long long t = clock64(); if (i < n) y[i] = x[i];", "forbidden_construct", "clock"),
    ("", "if (clock() > 5) return;", "forbidden_construct", "clock"),
    ("", 'unsigned long long t; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));',
     "forbidden_construct", "globaltimer"),
    ("", 'unsigned t; asm("mov.u32 %0, %clock;" : "=r"(t));', "forbidden_construct", "clock"),
    ("__device__ int calls;\n", "atomicAdd(&calls, 1);", "forbidden_construct", "__device__"),
    ("__device__ float cache[1024] = {0};\n", "", "forbidden_construct", "__device__"),
    ("static __device__ int hits = 0;\n", "", "forbidden_construct", "__device__"),
    ("__managed__ int flag;\n", "", "forbidden_construct", "__managed__"),
    ("", "static int calls = 0; calls++;", "forbidden_construct", "static"),
    ("", "float* p = (float*)malloc(16);", "forbidden_construct", "heap"),
    ("", "float* p = new float[4];", "forbidden_construct", "heap"),
    ("", "k<<<1, 1>>>(x, y, n);", "forbidden_construct", "dynamic parallelism"),
    ("", "cudaDeviceSynchronize();", "forbidden_construct", "runtime"),
    ('asm(".global .u32 counter;");\n', "", "forbidden_construct", "inline PTX"),
    ("#include <stdio.h>\n", "", "forbidden_import", "stdio.h"),
    ('#include "../../etc/passwd"\n', "", "forbidden_import", "passwd"),
    ("#include </usr/include/unistd.h>\n", "", "forbidden_import", "unistd"),
])
def test_device_code_rules(prelude, body, reason, words):
    issue = check_source(with_body(body, prelude))
    assert issue is not None, (prelude, body)
    assert issue.reason == reason and words in issue.message, issue
    assert issue.message.startswith("CUDA_SOURCE line")


@pytest.mark.parametrize(("prelude", "body"), [
    ("#include <cuda_bf16.h>\n#include <cuda_fp16.h>\n#include <cooperative_groups.h>\n", ""),
    ("__constant__ float table[4] = {1, 2, 3, 4};\n", "if (i < n) y[i] = x[i] * table[i & 3];"),
    ("__device__ __constant__ float table2[2] = {1, 2};\n", ""),
    ("template <int N> __device__ __forceinline__ float f(float v) { return v * N; }\n",
     "if (i < n) y[i] = f<2>(x[i]);"),
    ("static __device__ __forceinline__ float g(float v) { return v; }\n", ""),
    ("", "static const int K = 4; static constexpr int L = 2; if (i < n) y[i] = x[i] * K * L;"),
    ("", "__shared__ float buf[256]; extern __shared__ float dyn[]; buf[threadIdx.x] = 0;"),
    ("", "static __shared__ float buf2[32]; buf2[0] = 1;"),
    ("", 'float v; asm volatile("ld.global.nc.f32 %0, [%1];" : "=f"(v) : "l"(x + i));'),
    ("", 'asm volatile("st.global.f32 [%0], %1;" :: "l"(y + i), "f"(1.0f));'),
    ("", "int j = static_cast<int>(x[0]); float t = 0.f; float new_value = t; (void)j;"),
    ("", 'printf("%d\\n", i); // clock64() in a comment\n /* malloc( */'),
    ("", 'const char* s = "clock64() __device__ int q;"; (void)s;'),
    ("", "auto tile = threadIdx.x; (void)tile; float r = __fdividef(1.f, 2.f); (void)r;"),
])
def test_honest_device_code_passes(prelude, body):
    assert check_source(with_body(body, prelude)) is None


@pytest.mark.parametrize(("spec", "words"), [
    (SPEC.replace('"kernel": "k"', '"kernel": "nope"'), "no `extern \"C\" __global__` kernel"),
    (SPEC.replace('"args": ["x", "y", "numel(x)"]', '"args": ["x", "y"]'), "2 args"),
    (SPEC.replace('"args": ["x", "y", "numel(x)"]', '"args": ["x", "y", "numel(x)", "1"]'),
     "4 args"),
    (SPEC.replace('"args": ["x", "y", "numel(x)"]', '"args": ["x", "BLOCK", "numel(x)"]'),
     "takes a tensor"),
    (SPEC.replace('"args": ["x", "y", "numel(x)"]', '"args": ["x + 1", "y", "numel(x)"]'),
     "takes a tensor"),
    (SPEC.replace('"args": ["x", "y", "numel(x)"]', '"args": ["x", "y", "y"]'), "is a tensor"),
])
def test_launches_must_match_the_kernels(spec, words):
    issue = check_source(candidate(KERNEL.replace("BODY", ""), spec))
    assert issue is not None and issue.reason == "bad_interface" and words in issue.message, issue


def test_no_kernel_at_all():
    issue = check_source(candidate('__device__ float f(float v) { return v; }\n'))
    assert issue.reason == "bad_interface" and "no `extern" in issue.message


def test_missing_settings_and_syntax():
    with pytest.raises(SpecError, match="missing `CUDA_SOURCE`"):
        parse_spec("LAUNCH = []\nOUTPUTS = []\n")
    assert check_source("CUDA_SOURCE = r'''\n").reason == "syntax_error"
