"""A run with no seed and a model: generation 0 is written by the model from the reference,
against the loopback Ollama server (the official client) and the CPU interpreter. A broken
first answer is fixed once its failure has been fed back; a model that never gets there
ends the run with the reason.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from evotui.dialects import get_backend
from evotui.engine.loop import Engine
from evotui.engine.mutators import LLMMutator
from evotui.engine.prompting import PromptBuilder
from evotui.engine.rundir import RunDir, load_checkpoint
from evotui.engine.state import EngineConfig
from evotui.llm import OllamaLLM
from evotui.task.model import resolve_task
from tests.fake_ollama import FakeOllama

pytestmark = pytest.mark.timeout(240)

RELU_TASK = '''import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


batch_size = 8
dim = 300


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
'''

RELU = '''import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK_SIZE = 256
TUNABLES = {"BLOCK_SIZE": [128, 256, 512]}


@triton.jit
def relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    tl.store(y_ptr + offs, tl.maximum(x, 0.0), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        relu_kernel[(triton.cdiv(n, BLOCK_SIZE),)](x, y, n, BLOCK=BLOCK_SIZE)
        return y
'''
# the last row is copied, not rectified: a mismatch whose worst elements sit in row 7
WRONG_EDGE = RELU.replace("tl.maximum(x, 0.0), mask=mask)",
                          "tl.where(offs < n - 300, tl.maximum(x, 0.0), x), mask=mask)")
SYNTAX_ERROR = RELU.replace("def forward(self, x", "def forward(self x")


def fenced(code: str, say: str = "A one-program-per-block ReLU.") -> str:
    return f"{say}\n\n```python\n{code}```\n"


def relu_task(tmp_path: Path) -> Path:
    folder = tmp_path / "kb"
    folder.mkdir(exist_ok=True)
    path = folder / "19_ReLU.py"
    path.write_text(RELU_TASK)
    return path


def engine_for(task_path: Path, pool, fake: FakeOllama, out: Path, resume: bool = False,
               **config) -> Engine:
    llm = OllamaLLM("qwen2.5-coder:7b", host=fake.url, timeout=30, backoff=0.01,
                    options={"temperature": 0.7})
    mutator = LLMMutator(llm, PromptBuilder(get_backend("triton").prompt_dir))
    cfg = EngineConfig(**{"iterations": 1, "memory_k": 0, "concurrency": 1,
                          "distill": False, **config})
    return Engine(resolve_task(task_path), pool, mutator, cfg, seed_source=None,
                  run_dir=RunDir(out, resume=resume),
                  checkpoint=load_checkpoint(out) if resume else None)


def user_prompts(fake: FakeOllama) -> list[str]:
    return [r.body["messages"][-1]["content"] for r in fake.requests_to("/api/chat")]


def test_a_broken_first_answer_is_fixed_after_its_failure_is_fed_back(cpu_pool, tmp_path):
    variant = RELU.replace("BLOCK_SIZE = 256", "BLOCK_SIZE = 128")
    with FakeOllama(default=lambda req: fenced(variant, "Smaller blocks.")) as fake:
        fake.script(fenced(SYNTAX_ERROR), fenced(WRONG_EDGE), fenced(RELU))
        engine = engine_for(relu_task(tmp_path), cpu_pool, fake, tmp_path / "run")
        events = []
        engine.subscribe(events.append)
        result = asyncio.run(engine.run())
        prompts = user_prompts(fake)

    assert result.outcome == "completed", result.message
    # generation 0 took three answers: a syntax error, a mismatch, then a correct kernel
    seed = engine.population.get(engine.state.seed_id)
    assert seed.status == "accepted" and seed.source.strip() == RELU.strip()
    assert seed.generation == 0 and seed.parent_id is None and seed.model == "qwen2.5-coder:7b"
    first, second, third = prompts[:3]
    assert "write a Triton version of this reference" in first
    assert "What went wrong" not in first
    # the second prompt carries the first failure, the third the judge's mismatch
    assert "syntax error" in second and "What went wrong last time" in second
    assert "mismatch" in third and "beyond tolerance" in third
    assert "worst: [7," in third  # the worst elements, in the row the kernel missed
    assert "tl.where(offs < n - 300" in third  # the program that failed, to fix
    # then evolution goes on as usual: one child of the model-written seed
    assert result.evaluated == 1 and len(prompts) == 4
    assert f"# The current program ({seed.id})" in prompts[3]
    statuses = [e.message for e in events if e.kind == "status"]
    assert any("writing generation 0 from the reference" in m and "attempt 1 of 6" in m
               for m in statuses)
    assert any("generation 0 accepted" in m for m in statuses)
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    assert report["outcome"] == "completed"
    assert (tmp_path / "run" / "best.py").is_file()


def test_no_accepted_generation_zero_ends_the_run_with_the_last_reason(cpu_pool, tmp_path):
    with FakeOllama(default=lambda req: "I would use a Triton kernel here.") as fake:
        fake.script(fenced(WRONG_EDGE))
        engine = engine_for(relu_task(tmp_path), cpu_pool, fake, tmp_path / "run",
                            seed_attempts=3)
        result = asyncio.run(engine.run())
        prompts = user_prompts(fake)
    assert result.outcome == "failed"
    assert result.message.startswith("no accepted generation 0 after 3 attempts: ")
    assert "unusable answer (no_code)" in result.message
    assert len(prompts) == 3 and result.evaluated == 0 and engine.state.seed_id is None
    # the mismatch stays listed among the earlier failures
    assert "mismatch" in prompts[2]


def test_a_resumed_run_goes_on_from_its_failed_generation_zero_attempts(cpu_pool, tmp_path):
    out = tmp_path / "run"
    task = relu_task(tmp_path)
    with FakeOllama() as fake:
        fake.script(fenced(WRONG_EDGE))
        engine = engine_for(task, cpu_pool, fake, out, seed_attempts=1)
        first = asyncio.run(engine.run())
        engine.run_dir.close()
    assert first.outcome == "failed"
    with FakeOllama(default=lambda req: "No more code.") as fake:
        fake.script(fenced(RELU))
        engine = engine_for(task, cpu_pool, fake, out, resume=True, seed_attempts=3,
                            max_consecutive_failures=1)
        events = []
        engine.subscribe(events.append)
        result = asyncio.run(engine.run())
        prompts = user_prompts(fake)
    assert engine.state.seed_id is not None, result.message
    assert engine.population.get(engine.state.seed_id).source.strip() == RELU.strip()
    # the resumed prompt carries the mismatch of the first session; numbering goes on
    assert "mismatch" in prompts[0] and "attempt 1" in prompts[0]
    assert any("attempt 2 of 3" in e.message for e in events if e.kind == "status")


# ---- through `evotui run`, headless ---------------------------------------------------------

def run_headless(task: Path, fake: FakeOllama, pool, out: Path) -> tuple[int, str]:
    import io

    from rich.console import Console

    from evotui import headless
    from evotui.engine.session import RunOptions

    err = io.StringIO()
    options = RunOptions(task=str(task), device="cpu", iterations=1, mutator="llm",
                         ollama_host=fake.url, out=str(out), memory_k=0, llm_backoff=0.01)
    code = asyncio.run(headless.arun(options, evaluator=pool, out=io.StringIO(),
                                     console=Console(file=err, width=200)))
    return code, err.getvalue()


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("EVOTUI_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_evotui_run_without_a_seed_shows_generation_zero_being_written(cpu_pool, home, tmp_path):
    variant = RELU.replace("BLOCK_SIZE = 256", "BLOCK_SIZE = 512")
    with FakeOllama(default=lambda req: fenced(variant, "Larger blocks.")) as fake:
        fake.script(fenced(SYNTAX_ERROR), fenced(RELU))
        code, shown = run_headless(relu_task(tmp_path), fake, cpu_pool, tmp_path / "run")
    assert code == 0, shown
    assert "writing generation 0 from the reference with qwen2.5-coder:7b (attempt 1 of 6)" in shown
    assert "generation 0 attempt 1 failed (unusable answer (syntax_error))" in shown
    assert "(generation 0 by qwen2.5-coder:7b): accepted" in shown


def test_evotui_run_exits_1_when_no_generation_zero_is_accepted(cpu_pool, home, tmp_path):
    with FakeOllama(default=lambda req: "A Triton kernel would do it.") as fake:
        code, shown = run_headless(relu_task(tmp_path), fake, cpu_pool, tmp_path / "run")
        asked = len(fake.requests_to("/api/chat"))
    assert code == 1 and asked == 6
    assert "no accepted generation 0 after 6 attempts: unusable answer (no_code)" in shown
