"""Static rules for CUDA candidates' device code, and their launch specs against the kernels'
parameter lists (no compiler, no GPU)."""

from __future__ import annotations

import pytest

from evotui.dialects.cuda.spec import SpecError, parse_spec
from evotui.dialects.cuda.static_rules import check_source
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
    from evotui.dialects.cuda import CudaBackend

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
    # what hid from the rules that read the text
    ('#define H "/etc/hostname"\n#include H\n', "", "forbidden_import", "<H>"),
    ("%:include <stdio.h>\n", "", "forbidden_import", "stdio.h"),
    ('#inc\\\nlude "/etc/hostname"\n', "", "forbidden_import", "hostname"),
    ("", "long long t = clo\\\nck64(); (void)t;", "forbidden_construct", "clock"),
    ("", 'unsigned t; asm("mov.u32 %0, %%globaltimer_lo;" : "=r"(t));', "forbidden_construct",
     "globaltimer"),
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


# -- the PTX rules (ptx_rules.py): what the compiled code does, whatever the spelling ----------
# Each of these passed the source rules above and compiled.
PTX_CHEATS = [
    ("define_clock", "#define CLK clock64\n", "long long t = CLK(); if (i < n) y[i] = t ? x[i] : 0.f;",
     "%clock64"),
    ("paste_clock", "#define CAT(a, b) a##b\n", "if (i < n) y[i] = CAT(clock, 64)() ? x[i] : 0.f;",
     "%clock64"),
    ("string_timer", "", 'unsigned long long t; asm volatile("mov.u64 %0, %%glob" "altimer;" : "=l"(t));'
     " if (i < n) y[i] = t ? x[i] : 0.f;", "%globaltimer"),
    ("gridid", "", 'unsigned long long g; asm("mov.u64 %0, %%gridid;" : "=l"(g));'
     " if (i < n) y[i] = g ? x[i] : 0.f;", "%gridid"),
    ("default_device_global", "int calls;\n", "atomicAdd(&calls, 1); if (i < n) y[i] = x[i];",
     "module variable `calls`"),
    ("brace_init", "__device__ int calls{0};\n", "atomicAdd(&calls, 1); if (i < n) y[i] = x[i];",
     "module variable `calls`"),
    ("paren_name", "__device__ int (calls);\n", "atomicAdd(&calls, 1); if (i < n) y[i] = x[i];",
     "module variable `calls`"),
    ("anon_struct", "__device__ struct { int n; } st;\n", "atomicAdd(&st.n, 1); if (i < n) y[i] = x[i];",
     "module variable `st`"),
    ("pasted_device", "#define D(a) __dev##a\nD(ice__) int calls;\n",
     "atomicAdd(&calls, 1); if (i < n) y[i] = x[i];", "module variable `calls`"),
    ("template_var", "template <int N> int counter = 0;\n",
     "atomicAdd(&counter<0>, 1); if (i < n) y[i] = x[i];", "module variable"),
    ("static_mutable", "struct S { mutable int n; };\n",
     "static const S s{}; atomicAdd(&s.n, 1); if (i < n) y[i] = x[i];", "module variable"),
    ("static_const_cast", "", "static const int c[1] = {0}; atomicAdd(const_cast<int*>(c), 1);"
     " if (i < n) y[i] = x[i];", "module variable"),
    ("string_literal_state", "", 'int* s = (int*)"\\0\\0\\0\\0"; atomicAdd(s, 1); if (i < n) y[i] = x[i];',
     "module variable `$str`"),
    ("malloc_macro", "#define ALLOC malloc\n",
     "float* p = (float*)ALLOC (16); if (i < n) y[i] = p ? x[i] : 0.f;", "`malloc`"),
    ("operator_new", "", "float* p = (float*)operator new(16); if (i < n) y[i] = p ? x[i] : 0.f;",
     "`malloc`"),
    ("write_input", "", "if (i < n) { y[i] = x[i]; const_cast<float*>(x)[i] = 0.f; }",
     "input parameter 0 of `k`"),
    ("write_input_via_output", "", "if (i < n) { y[i] = x[i]; float* p = y + (x - y); p[i] = 0.f; }",
     "input parameter 0"),
    ("write_input_via_local", "", "if (i < n) { y[i] = x[i]; volatile unsigned long long s = "
     "(unsigned long long)x; ((float*)s)[i] = 1.f; }", "input parameter 0"),
    ("write_input_in_helper", "__device__ __noinline__ void zap(float* p, int i) { p[i] = 0.f; }\n",
     "if (i < n) { y[i] = x[i]; zap(const_cast<float*>(x), i); }", "input parameter 0"),
    ("write_input_inline_ptx", "", 'if (i < n) { y[i] = x[i]; asm volatile("st.global.f32 [%0], %1;"'
     ' :: "l"(x + i), "f"(0.f)); }', "input parameter 0"),
    ("input_pointer_to_shared", "", "__shared__ const float* sp; if (threadIdx.x == 0) sp = x;"
     " __syncthreads(); if (i < n) { y[i] = x[i]; ((float*)sp)[i] = 0.f; }", "input parameter 0"),
]

HONEST_COMPILED = [
    ("float4", "", "if (4 * i + 3 < n) reinterpret_cast<float4*>(y)[i] = "
     "reinterpret_cast<const float4*>(x)[i];"),
    ("ldg_and_alignment", "", "bool al = (reinterpret_cast<unsigned long long>(x) & 15) == 0;"
     " if (i < n) y[i] = al ? __ldg(x + i) : x[i];"),
    ("noinline_helpers", "__device__ __noinline__ float rd(const float* p, int i) { return p[i]; }\n"
     "__device__ __noinline__ void wr(float* p, int i, float v) { p[i] = v; }\n",
     "if (i < n) wr(y, i, rd(x, i));"),
    ("cp_async", "#include <cuda_pipeline.h>\n", "__shared__ float s[256]; if (i < n) {"
     " __pipeline_memcpy_async(&s[threadIdx.x], x + i, 4); __pipeline_commit();"
     " __pipeline_wait_prior(0); y[i] = s[threadIdx.x]; }"),
    ("tables", "__constant__ float tb[4] = {1, 2, 3, 4};\n",
     "static const float t2[2] = {1, 2}; if (i < n) y[i] = x[i] * tb[i & 3] * t2[i & 1];"),
    ("printf_strings", "", 'if (i == 0) printf("%s %f %p\\n", "x0", x[0], x); if (i < n) y[i] = x[i];'),
    ("pointer_select", "", "const float* src = (n & 1) ? x : x + 1; if (i + 1 < n) y[i] = src[i];"),
    ("template_unroll", "template <typename T, int U> __device__ __forceinline__ void cp(const T* a,"
     " T* b, int i, int n) {\n#pragma unroll\n for (int u = 0; u < U; ++u) { int j = i * U + u;"
     " if (j < n) b[j] = a[j]; } }\n", "cp<float, 4>(x, y, i, n);"),
    ("cache_hints_nanosleep_smid", "", 'float v; unsigned sm; asm("mov.u32 %0, %%smid;" : "=r"(sm));'
     ' __nanosleep(sm & 1); if (i < n) { asm volatile("ld.global.nc.L1::no_allocate.f32 %0, [%1];"'
     ' : "=f"(v) : "l"(x + i)); asm volatile("prefetch.global.L2 [%0];" :: "l"(x + i)); y[i] = v; }'),
]


def _needs_nvrtc():
    from evotui.dialects.cuda import compiler

    ok, why = compiler.available()
    if not ok or not compiler.include_dirs():
        pytest.skip(f"NVRTC or the CUDA headers unavailable: {why}")


@pytest.mark.parametrize(("name", "prelude", "body", "words"), PTX_CHEATS,
                         ids=[c[0] for c in PTX_CHEATS])
def test_ptx_rules_refuse_what_the_source_rules_missed(name, prelude, body, words):
    _needs_nvrtc()
    from evotui.dialects.cuda import CudaBackend

    source = with_body(body, prelude)
    issue = check_source(source)
    assert issue is None or issue.reason == "forbidden_construct", issue
    issue = CudaBackend().precheck(source, "sm_90")
    assert issue is not None and issue.reason == "forbidden_construct", (name, issue)
    assert words in issue.message and issue.message.startswith("CUDA_SOURCE (compiled)"), issue


@pytest.mark.parametrize(("name", "prelude", "body"), HONEST_COMPILED,
                         ids=[c[0] for c in HONEST_COMPILED])
def test_ptx_rules_pass_honest_device_code(name, prelude, body):
    _needs_nvrtc()
    from evotui.dialects.cuda import CudaBackend

    source = with_body(body, prelude)
    assert check_source(source) is None
    assert CudaBackend().precheck(source, "sm_90") is None


def test_ptx_rules_on_hand_written_ptx():
    from evotui.dialects.cuda import ptx_rules

    head = ".version 8.0\n.target sm_90\n.address_size 64\n"
    entry = ".visible .entry k(\n.param .u64 k_param_0,\n.param .u64 k_param_1\n)\n{\n"
    read = ("ld.param.u64 %rd1, [k_param_0];\nld.param.u64 %rd2, [k_param_1];\n"
            "cvta.to.global.u64 %rd3, %rd1;\nld.global.v4.f32 {%f1, %f2, %f3, %f4}, [%rd3];\n"
            "cvta.to.global.u64 %rd4, %rd2;\nst.global.f32 [%rd4], %f1;\nret;\n}\n")
    assert ptx_rules.check(head + entry + read, [("k", 0)]) is None
    # the same store through the input parameter, or into a module variable
    assert "input parameter 0" in ptx_rules.check(head + entry + read.replace(
        "st.global.f32 [%rd4]", "st.global.f32 [%rd3]"), [("k", 0)])
    glob = head + ".global .align 4 .u32 seen;\n" + entry + read.replace(
        "ret;", "red.global.add.u32 [seen], 1;\nret;")
    assert "module variable `seen`" in ptx_rules.check(glob)
    assert "address" in ptx_rules.check(head + ".global .u32 a;\n.global .u64 b = {generic(a)};\n")
    assert "%clock" in ptx_rules.check(head + entry + "mov.u32 %r1, %clock;\nret;\n}\n")
    assert "`free`" in ptx_rules.check(head + ".extern .func free\n(\n.param .b64 free_param_0\n)\n;\n")
