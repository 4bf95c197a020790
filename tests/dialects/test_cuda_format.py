"""The CUDA C dialect without a GPU: the expression language, the candidate schema, the
kernel signatures, the static rules and the routing of sources to dialects."""

from __future__ import annotations

import pytest

from evotui.dialects import backend_for_source
from evotui.dialects.cuda import device_code
from evotui.dialects.cuda.expr import ExprError, evaluate_int, parse
from evotui.dialects.cuda.spec import SpecError, parse_spec
from evotui.dialects.cuda.static_rules import check_source
from tests.conftest import SAMPLES

SOFTMAX_CUDA = (SAMPLES / "softmax" / "seed_cuda.py").read_text()
RMSNORM_CUDA = (SAMPLES / "rmsnorm" / "seed_cuda.py").read_text()


class FakeTensor:
    def __init__(self, shape, strides=None):
        self.shape = shape
        strides = strides or tuple(
            int(__import__("math").prod(shape[i + 1:])) for i in range(len(shape)))
        self._strides = strides

    def stride(self, dim):
        return self._strides[dim]

    def dim(self):
        return len(self.shape)

    def numel(self):
        return int(__import__("math").prod(self.shape))


# -- expressions ------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "value"), [
    ("cdiv(M, BLOCK)", 8), ("M * N + 3", 10000003), ("-(M // 3) % 7", 3), ("min(M, N, 9)", 9),
    ("max(M, 2 * N)", 20000), ("next_pow2(N)", 16384), ("next_pow2(1)", 1), (42, 42),
    ("size(x, -1)", 3001), ("size(x, 0)", 1000), ("stride(x, 0)", 3001), ("numel(x)", 3001000),
    ("ndim(x)", 2), ("cdiv(numel(x), BLOCK * 4)", 5862),
])
def test_expressions_evaluate(text, value):
    env = {"M": 1000, "N": 10000, "BLOCK": 128, "x": FakeTensor((1000, 3001))}
    assert evaluate_int(parse(text), env, "test") == value


def test_floats_pass_through_for_scalar_arguments():
    assert parse("eps")({"eps": 1e-6}) == 1e-6
    assert parse("2 * eps + 1")({"eps": 0.5}) == 2.0
    with pytest.raises(ExprError, match="integer"):
        evaluate_int(parse("eps"), {"eps": 0.5}, "grid")


@pytest.mark.parametrize("text", [
    "x.shape[0]", "x[0]", "M / 2", "M ** 2", "M if N else 1", "M < N", "'a'", "lambda: 1",
    "__import__('os')", "open('f')", "getattr(x, 'y')", "cdiv(M, b=2)", "size(x)",
    "size(x + 1, 0)", "cdiv(*M)", "[M]", "M and N", "True", "cdiv", "(M := 3)", "", "   ",
    "M +" , "f'{M}'", "M" * 400, None, [1], "not M", "~M", "M << 2",
])
def test_anything_else_is_rejected_when_parsed(text):
    with pytest.raises(ExprError):
        parse(text)


def test_evaluation_errors_are_clear():
    env = {"M": 10, "x": FakeTensor((4, 5))}
    with pytest.raises(ExprError, match="unknown name `Q`"):
        parse("Q + 1")(env)
    with pytest.raises(ExprError, match="division by zero"):
        parse("M // 0")(env)
    with pytest.raises(ExprError, match="out of range"):
        parse("size(x, 2)")(env)
    with pytest.raises(ExprError, match="not a tensor"):
        parse("size(M, 0)")(env)
    with pytest.raises(ExprError, match="not a number"):
        parse("x + 1")(env)
    with pytest.raises(ExprError, match="out of range"):
        parse("M * M * M * M * M * M * M * M * M * M * M * M * M * M * M * M * M * M * M")(env)


# -- the schema -----------------------------------------------------------------------------
def test_the_seeds_parse_into_specs():
    spec = parse_spec(RMSNORM_CUDA)
    assert spec.constants == {"BLOCK": 128} and spec.tunables == {"BLOCK": (64, 128, 256, 512, 1024)}
    assert [b.name for b in spec.outputs] == ["y"] and spec.outputs[0].like == "x"
    assert [n for n, _ in spec.symbols] == ["N", "M"]
    (launch,) = spec.launches
    assert launch.kernel == "rmsnorm_rows" and [a.text for a in launch.args] == [
        "x", "weight", "y", "N", "eps"]
    assert launch.shared_mem.text == "0"
    assert spec.cuda_source.lstrip().startswith("#define")
    assert parse_spec(SOFTMAX_CUDA).launches[0].grid[0].text == "M"


BASE = '''CUDA_SOURCE = r"""
extern "C" __global__ void k(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i];
}
"""
BLOCK = 256
OUTPUTS = [{"name": "y", "like": "x"}]
LAUNCH = [{"kernel": "k", "grid": ["cdiv(numel(x), BLOCK)"], "block": ["BLOCK"],
           "args": ["x", "y", "numel(x)"]}]
'''


@pytest.mark.parametrize(("extra", "reason", "words"), [
    ("import os", "forbidden_construct", "NAME = <literal>"),
    ("def f():\n    pass", "forbidden_construct", "FunctionDef"),
    ("class ModelNew:\n    pass", "forbidden_construct", "ClassDef"),
    ("X = 1 + 2", "forbidden_construct", "must be a literal"),
    ("X = __import__('os')", "forbidden_construct", "must be a literal"),
    ("X, Y = 1, 2", "forbidden_construct", "NAME = <literal>"),
    ("block = 3", "bad_interface", "unknown name `block`"),
    ("BLOCK = 128", "bad_interface", "assigned twice"),
    ("WIDTH = 'wide'", "bad_interface", "int constant"),
    ("WIDTH = True", "bad_interface", "int constant"),
    ("TUNABLES = {'WIDTH': [1, 2]}", "bad_interface", "not a module-level int constant"),
    ("TUNABLES = {'BLOCK': []}", "bad_interface", "non-empty list"),
    ("NVRTC_OPTIONS = ['-I/etc']", "forbidden_construct", "not allowed"),
    ("NVRTC_OPTIONS = ['--use_fast_math', '--maxrregcount=64']", None, ""),
    ("SCRATCH = [{'name': 'y', 'shape': ['4'], 'dtype': 'float32'}]", "bad_interface", "both"),
    ("SCRATCH = [{'name': 'tmp', 'shape': ['4']}]", "bad_interface", "`dtype` or `like`"),
    ("SCRATCH = [{'name': 'tmp', 'dtype': 'float32'}]", "bad_interface", "`shape` or `like`"),
    ("SCRATCH = [{'name': 'tmp', 'shape': ['x.n'], 'dtype': 'float32'}]", "bad_interface", "Attribute"),
    ("SCRATCH = [{'name': 'tmp', 'shape': [4], 'dtype': 'float99!'}]", "bad_interface", "dtype"),
    ("SCRATCH = [{'name': 'tmp', 'shape': [4], 'dtype': 'int32', 'init': 1}]", "bad_interface", "unknown keys"),
    ("SYMBOLS = {'BLOCK': '4'}", "bad_interface", "both"),
    ("SYMBOLS = {'size': '4'}", "bad_interface", "not a valid name"),
])
def test_schema_errors_name_the_problem(extra, reason, words):
    source = BASE + extra + "\n"
    if reason is None:
        parse_spec(source)
        assert check_source(source) is None
        return
    with pytest.raises(SpecError) as e:
        parse_spec(source)
    assert e.value.reason == reason and words in e.value.message, e.value.message
    issue = check_source(source)
    assert issue is not None and issue.reason == reason


@pytest.mark.parametrize(("old", "new", "words"), [
    ('LAUNCH = [', 'LAUNCHES = [', "unknown name"),
    ('"grid": ["cdiv(numel(x), BLOCK)"]', '"grid": []', "1 to 3 dimensions"),
    ('"grid": ["cdiv(numel(x), BLOCK)"]', '"grid": [1, 1, 1, 1]', "1 to 3 dimensions"),
    ('"kernel": "k", ', '', "missing `kernel`"),
    ('"args"', '"argv"', "unknown keys"),
    ('OUTPUTS = [{"name": "y", "like": "x"}]', 'OUTPUTS = []', "empty"),
])
def test_launch_and_output_errors(old, new, words):
    with pytest.raises(SpecError, match=words):
        parse_spec(BASE.replace(old, new))


def test_a_file_without_cuda_source_is_routed_to_triton_and_vice_versa():
    assert backend_for_source(SOFTMAX_CUDA).name == "cuda"
    assert backend_for_source(RMSNORM_CUDA).name == "cuda"
    assert backend_for_source((SAMPLES / "softmax" / "seed.py").read_text()).name == "triton"
    # a Triton module that smuggles CUDA_SOURCE in is judged by the stricter CUDA rules
    smuggled = (SAMPLES / "softmax" / "seed.py").read_text() + '\nCUDA_SOURCE = "x"\n'
    assert backend_for_source(smuggled).name == "cuda"
    assert check_source(smuggled).reason == "forbidden_construct"
    with pytest.raises(SpecError, match="unknown name `SOURCE`"):
        parse_spec(BASE.replace("CUDA_SOURCE = ", "SOURCE = "))


# -- kernel signatures ------------------------------------------------------------------------
def test_kernel_signatures_are_read_from_the_device_code():
    src = '''
    // extern "C" __global__ void commented_out(int a) {}
    /* extern "C" __global__ void also_commented(int a) {} */
    extern "C" __global__ void __launch_bounds__(BLOCK * (2 + 1), 2)
    first(const float* __restrict__ x, __nv_bfloat16 *y, unsigned int n, size_t m,
          const float w[], long long s, float eps, bool flag) { }
    extern "C" __device__ float helper(float v) { return v; }
    extern "C"
    __global__
    void second(void) { }
    extern "C" __global__ void third(half h, __nv_bfloat16 b, const int32_t n) { }
    '''
    found = device_code.kernels(src)
    assert sorted(found) == ["first", "second", "third"]
    first = found["first"].params
    assert [(p.name, p.ctype, p.pointer) for p in first] == [
        ("x", "float", True), ("y", "__nv_bfloat16", True), ("n", "unsigned int", False),
        ("m", "size_t", False), ("w", "float", True), ("s", "long long", False),
        ("eps", "float", False), ("flag", "bool", False)]
    assert found["second"].params == ()
    assert [p.ctype for p in found["third"].params] == ["half", "__nv_bfloat16", "int32_t"]


@pytest.mark.parametrize("params", [
    "float& x", "int n = 3", "float** p", "MyStruct s", "int n, ...", "Tensor<float> t", "x",
])
def test_parameters_the_harness_cannot_pass_are_refused(params):
    with pytest.raises(device_code.SignatureError):
        device_code.kernels(f'extern "C" __global__ void k({params}) {{ }}')


def test_includes_outside_comments():
    src = '#include <cuda_bf16.h>\n// #include <stdio.h>\n  #  include "mma.h"\n'
    assert device_code.includes(src) == [("cuda_bf16.h", 1), ("mma.h", 3)]
