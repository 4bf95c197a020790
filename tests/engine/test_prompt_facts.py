"""What the prompts tell the model, as the loopback Ollama server receives them: the dtypes,
the judge's own tolerances, only the shapes the task really checks, the TF32 trap of fp32
``tl.dot``; advice found by what the reference computes rather than by the file's name; and
a model that repeats itself steered (what was tried, another kind of change, a bounded
higher temperature).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from evotui.dialects import get_backend
from evotui.engine.loop import Engine
from evotui.engine.mutators import LLMMutator
from evotui.engine.prompting import PromptBuilder
from evotui.engine.state import EngineConfig
from evotui.llm import OllamaLLM
from evotui.memory.hook import MemoryHook
from evotui.memory.retrieve import Query, Retriever
from evotui.memory.store import AdviceStore
from evotui.task.model import resolve_task
from tests.conftest import SAMPLES
from tests.engine.test_generation_zero import RELU_TASK
from tests.engine_helpers import SOFTMAX_SEED
from tests.fake_ollama import FakeOllama

pytestmark = pytest.mark.timeout(240)

MATMUL_TASK = '''import torch
import torch.nn as nn


class Model(nn.Module):
    """C = A @ B on square fp32 matrices."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


N = 48


def get_inputs():
    A = torch.randn(N, N)
    B = torch.randn(N, N)
    return [A, B]


def get_init_inputs():
    return []
'''
TF32_SENTENCE = 'input_precision="ieee"'
ELEMENTWISE_TIP = "For large elementwise kernels"  # a cold-start piece of advice


def task_file(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / "kb" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    return path


def llm_mutator(fake: FakeOllama) -> LLMMutator:
    llm = OllamaLLM("qwen2.5-coder:7b", host=fake.url, timeout=30, backoff=0.01,
                    options={"temperature": 0.7})
    return LLMMutator(llm, PromptBuilder(get_backend("triton").prompt_dir), diff_share=0.0)


def run_engine(task: Path, pool, fake: FakeOllama, seed: str | None = None,
               memory: MemoryHook | None = None, **config) -> Engine:
    cfg = EngineConfig(**{"iterations": 1, "memory_k": 3 if memory else 0, "concurrency": 1,
                          "distill": False, "seed_attempts": 1, **config})
    engine = Engine(resolve_task(task), pool, llm_mutator(fake), cfg, seed_source=seed,
                    memory=memory)
    asyncio.run(engine.run())
    return engine


def chats(fake: FakeOllama) -> list[dict]:
    return [r.body for r in fake.requests_to("/api/chat")]


def test_an_fp32_matmul_prompt_states_dtype_tolerance_tf32_and_no_other_shapes(cpu_pool, tmp_path):
    path = task_file(tmp_path, "1_Square_matrix_multiplication_.py", MATMUL_TASK)
    with FakeOllama(default=lambda req: "No code from me.") as fake:
        run_engine(path, cpu_pool, fake)
        body = chats(fake)[0]
    system, user = body["messages"][0]["content"], body["messages"][-1]["content"]
    assert "A: float32 [48, 48]; B: float32 [48, 48]" in user
    assert "Output: float32 [48, 48]" in user
    # the judge's own tolerance for fp32 outputs (the task declares none)
    assert "≤ 0.0001 + 0.0001 × |reference|" in user
    assert "mm: a matrix product (GEMM)" in user
    assert TF32_SENTENCE in user and "fails only on the GPU" in user
    # a KernelBench file declares no other shape: nothing claims one
    assert "the task declares no other shape" in user
    for text in (system, user):
        assert "1000×3001" not in text and "other shapes too" not in text


def test_a_bf16_task_lists_its_declared_shapes_and_tolerance_and_no_tf32(cpu_pool, tmp_path):
    seed = (SAMPLES / "add_gelu" / "seed.py").read_text()
    with FakeOllama(default=lambda req: "Nothing to add.") as fake:
        run_engine(SAMPLES / "add_gelu", cpu_pool, fake, seed=seed, max_consecutive_failures=1)
        user = chats(fake)[0]["messages"][-1]["content"]
    assert "# The current program" in user
    assert "≤ 0.01 + 0.01 × |reference|" in user  # the task's own atol/rtol
    assert "at these 2 shapes" in user and "in Triton's CPU interpreter" in user
    assert "1. a: bfloat16 [16, 512]; b: bfloat16 [16, 512] (timed)" in user
    assert "2. a: bfloat16 [7, 300]; b: bfloat16 [7, 300]" in user
    # the size a GPU times, to write the kernel for
    assert "On a GPU the task's own shape is timed: a: bfloat16 [8192, 8192]" in user
    assert "add, gelu: an element-wise kernel" in user
    assert TF32_SENTENCE not in user  # no matrix product


def test_advice_is_found_by_what_a_file_named_task_computes(cpu_pool, tmp_path):
    path = task_file(tmp_path, "19_ReLU.py", RELU_TASK)
    store = AdviceStore(tmp_path / "advice.json")  # the cold-start pack
    task = resolve_task(path)
    by_name = Retriever(store).retrieve(Query.for_task(task.meta), 3)
    assert not any(a.text.startswith(ELEMENTWISE_TIP) for a in by_name)  # the file name alone
    with FakeOllama(default=lambda req: "No code from me.") as fake:
        engine = run_engine(path, cpu_pool, fake, memory=MemoryHook(store, k=3))
        user = chats(fake)[0]["messages"][-1]["content"]
    assert engine.run_task.facts.family == "elementwise" and engine.run_task.facts.ops == ("relu",)
    assert "# Advice" in user and ELEMENTWISE_TIP in user


def test_a_repeating_model_is_told_what_it_tried_and_sampled_hotter(cpu_pool, tmp_path):
    variant = SOFTMAX_SEED.replace("NUM_WARPS = 8", "NUM_WARPS = 4")
    assert variant != SOFTMAX_SEED
    answer = f"Use four warps per row.\n\n```python\n{variant}```\n"
    with FakeOllama(default=lambda req: answer) as fake:
        engine = run_engine(SAMPLES / "softmax", cpu_pool, fake, seed=SOFTMAX_SEED,
                            iterations=3, max_consecutive_failures=5)
        bodies = chats(fake)
    # one child, then the same program again and again (a duplicate or an unchanged parent)
    assert len(bodies) == 6 and engine.state.evaluated == 1
    temps = [b["options"]["temperature"] for b in bodies]
    assert temps[:3] == [0.7, 0.7, 0.7]  # not steered before two repeats in a row
    assert temps[3] > 0.7 and temps[3] < temps[4] < temps[5] <= 1.2
    steered = [b["messages"][-1]["content"] for b in bodies[3:]]
    for user in steered:
        assert "Your last" in user and "answers gave no new program" in user
        assert "Already tried (do not propose these again)" in user
        assert "Use four warps per row" in user
        assert "Propose a different kind of change" in user
        assert "\n- seed\n" not in user  # the seed's copies are not changes that were tried
    # the block and warp knobs were what it tried: another kind of change is asked for
    assert "the TUNABLES values" not in steered[-1].split("Propose a different kind")[1]
    for body in bodies[:3]:
        assert "Your last" not in body["messages"][-1]["content"]


@pytest.mark.parametrize(("sample", "family", "ops"), [
    ("softmax", "softmax", ("_softmax",)),
    ("layernorm", "layernorm", ("native_layer_norm",)),
    ("rmsnorm", "rmsnorm", ("pow", "mean", "add", "rsqrt", "mul")),
    ("cross_entropy", "cross_entropy", ("_log_softmax", "nll_loss_forward")),
    ("matmul_bias_relu", "gemm", ("addmm", "relu")),
    ("row_sum", "reduction", ("sum",)),
])
def test_the_reference_is_traced_to_its_ops_and_family(sample, family, ops):
    from evotui.engine.task_facts import describe_task

    task = resolve_task(SAMPLES / sample)
    facts = describe_task(task, "cuda")
    assert (facts.family, facts.ops, facts.note) == (family, ops, "")
    assert facts.query_meta(task.meta).kind == task.meta.kind  # a declared kind is kept
    # bf16 GEMMs at 2e-2 do not need the TF32 warning; nothing else here has a tl.dot
    assert not facts.tf32_trap


# ---- the TF32 trap the prompt warns of -------------------------------------------------------

MATMUL = '''import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK = 32
TUNABLES = {"BLOCK": [16, 32, 64]}


@triton.jit
def mm_kernel(a_ptr, b_ptr, c_ptr, n, BLOCK: tl.constexpr):
    rm = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    rn = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    rk = tl.arange(0, BLOCK)
    acc = tl.zeros((BLOCK, BLOCK), dtype=tl.float32)
    for k in range(0, n, BLOCK):
        a = tl.load(a_ptr + rm[:, None] * n + (k + rk)[None, :],
                    mask=(rm[:, None] < n) & ((k + rk)[None, :] < n), other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * n + rn[None, :],
                    mask=((k + rk)[:, None] < n) & (rn[None, :] < n), other=0.0)
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * n + rn[None, :], acc, mask=(rm[:, None] < n) & (rn[None, :] < n))


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        A, B = A.contiguous(), B.contiguous()
        n = A.shape[0]
        C = torch.empty((n, n), dtype=A.dtype, device=A.device)
        mm_kernel[(triton.cdiv(n, BLOCK), triton.cdiv(n, BLOCK))](A, B, C, n, BLOCK=BLOCK)
        return C
'''
MATMUL_IEEE = MATMUL.replace("tl.dot(a, b)", 'tl.dot(a, b, input_precision="ieee")')


def judge(pool, task: Path, source: str):
    from evotui.eval.results import EvalRequest

    return pool.evaluate(EvalRequest(task=resolve_task(task), source=source, time=False))


def test_the_interpreter_computes_an_fp32_tl_dot_exactly(cpu_pool, tmp_path):
    path = task_file(tmp_path, "1_Square_matrix_multiplication_.py", MATMUL_TASK)
    for source in (MATMUL, MATMUL_IEEE):  # both pass here: the trap does not show on the CPU
        result = judge(cpu_pool, path, source)
        assert result.accepted, result.message


@pytest.mark.gpu
def test_on_a_gpu_an_fp32_tl_dot_fails_the_tolerance_unless_ieee(tmp_path):
    from evotui.eval import EvaluatorPool

    path = task_file(tmp_path, "1_Square_matrix_multiplication_.py",
                     MATMUL_TASK.replace("N = 48", "N = 1024"))
    with EvaluatorPool("cuda") as pool:
        tf32, ieee = judge(pool, path, MATMUL), judge(pool, path, MATMUL_IEEE)
    assert not tf32.accepted and tf32.reason == "mismatch", tf32.message
    assert ieee.accepted, ieee.message
