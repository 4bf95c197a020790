"""Prompts and mutators: the prompt's parts, LLM mutations through the official client
against the loopback server, failure kinds, the diff → full fallback, mixed mode."""

from __future__ import annotations

import asyncio
import random
import re

import pytest

from evotui.core.metrics import Metrics
from evotui.dialects import get_backend
from evotui.engine.mutators import (
    LLMMutator,
    MixedMutator,
    MutationRequest,
    ParamMutatorAdapter,
    summarize_reply,
)
from evotui.engine.population import Candidate
from evotui.engine.prompting import Inspiration, PromptBuilder, PromptContext, format_advice_views
from evotui.llm import OllamaLLM
from tests.engine_helpers import SOFTMAX_SEED
from tests.fake_ollama import Reply, closed_port_url
from tests.messy_replies import messy_replies

pytestmark = pytest.mark.timeout(60)
MODEL = "qwen2.5-coder:7b"
TASK_SOURCE = "class Model: ...  # the reference\n"


@pytest.fixture(scope="module")
def builder() -> PromptBuilder:
    return PromptBuilder(get_backend("triton").prompt_dir)


def parent(**kw) -> Candidate:
    figures = dict(time_ms=0.136, speedup_eager=2.07, speedup_compile=1.12, roofline_pct=94.0,
                   spread_pct=0.3)
    return Candidate(id="c0007", source=SOFTMAX_SEED, status="accepted",
                     metrics=Metrics(**{**figures, **kw}), description="NUM_WARPS 4→8")


def request(ctx: PromptContext, seed: int = 0) -> MutationRequest:
    return MutationRequest("c0100", ctx.parent, ctx, random.Random(seed))


def test_prompt_has_dialect_task_parent_metrics_failure_inspirations_advice_hints(builder):
    ctx = PromptContext(
        TASK_SOURCE, parent(),
        inspirations=[Inspiration("c0003", "correct; median 140 µs", "exp2",
                                  "--- c0007\n+++ c0003\n-e = tl.exp(x)\n+e = tl.exp2(x)\n")],
        advice_block=format_advice_views([{"id": "a9", "text": "Try num_warps 16 on long rows.",
                                           "gain": 0.12, "tags": ["softmax"]}]),
        hints=["keep one program per row"],
        last_failure={"id": "c0099", "reason": "mismatch", "message": "max abs error 0.2"})
    system = builder.system()
    assert "ModelNew" in system and "try`/`except" in system and "torch_fallback" in system
    assert "Tunables convention" in system and "pitfalls" in system.lower()
    for mode in ("diff", "full"):
        user = builder.user(ctx, mode)
        assert "{{" not in user and "}}" not in user
        assert SOFTMAX_SEED.strip("\n") in user  # verbatim: SEARCH blocks must match it
        assert TASK_SOURCE.strip() in user
        assert "2.07× eager PyTorch" in user and "1.12× torch.compile" in user
        assert "94 % of the roofline" in user and "NUM_WARPS 4→8" in user
        assert "c0099" in user and "mismatch" in user and "max abs error 0.2" in user
        assert "c0003" in user and "+e = tl.exp2(x)" in user
        assert "[a9] Try num_warps 16 on long rows." in user and "+12 %" in user
        assert "optional references" in user
        assert "keep one program per row" in user
    assert "<<<<<<< SEARCH" in builder.user(ctx, "diff")
    assert "complete new program" in builder.user(ctx, "full")


def test_prompt_without_extras_and_on_the_interpreter(builder):
    ctx = PromptContext(TASK_SOURCE, parent(speedup_eager=None, speedup_compile=None,
                                            roofline_pct=None, time_ms=21.0, interpreter=True))
    user = builder.user(ctx, "full")
    assert "CPU interpreter" in user and "speedup" not in user.lower().replace("faster", "")
    for absent in ("previous attempt", "Other programs", "Advice", "engineer watching"):
        assert absent not in user


def llm_mutator(fake, builder, **kw) -> LLMMutator:
    return LLMMutator(OllamaLLM(MODEL, host=fake.url, timeout=5, backoff=0.01), builder, **kw)


def test_llm_mutator_streams_extracts_and_counts(fake_ollama, builder):
    cases = messy_replies(SOFTMAX_SEED)
    fake_ollama.script(*[Reply(c.reply) for c in cases])
    mut = llm_mutator(fake_ollama, builder)
    ctx = PromptContext(TASK_SOURCE, parent())
    chunks: list[str] = []

    async def go():
        return [await mut.propose(request(ctx, i), chunks.append) for i in range(len(cases))]

    results = asyncio.run(go())
    kinds = [r.failure_kind for r in results]
    for case, r in zip(cases, results, strict=True):
        if case.error is None:
            assert r.ok and r.source and r.mutator == "llm" and r.model == MODEL, case.name
            for s in case.contains:
                assert s in r.source, case.name
        else:
            assert not r.ok and r.failure_kind, case.name
    assert {"no_code", "truncated", "patch_failed", "syntax_error", "no_change"} <= set(kinds)
    acc = mut.account
    assert acc.calls == len(cases) and acc.failures == sum(k is not None for k in kinds)
    assert acc.prompt_tokens > 0 and acc.completion_tokens > 0 and acc.seconds > 0
    assert "".join(chunks).count("ModelNew") >= 5  # every chunk was streamed to the sink
    # each request carried the parent's code
    for req in fake_ollama.requests_to("/api/chat"):
        assert SOFTMAX_SEED.strip() in req.body["messages"][-1]["content"]


def test_repeated_patch_failures_switch_to_full_rewrites(fake_ollama, builder):
    bad_diff = "<<<<<<< SEARCH\n    x = x * 2.0\n=======\n    x = x * 3.0\n>>>>>>> REPLACE\n"
    fake_ollama.script(bad_diff, bad_diff, f"```python\n{SOFTMAX_SEED.replace('= 8', '= 4')}```")
    mut = llm_mutator(fake_ollama, builder, diff_share=1.0, full_after=2)
    ctx = PromptContext(TASK_SOURCE, parent())

    async def go():
        return [await mut.propose(request(ctx, i)) for i in range(3)]

    r1, r2, r3 = asyncio.run(go())
    assert r1.failure_kind == r2.failure_kind == "patch_failed"
    assert (r1.mode, r2.mode, r3.mode) == ("diff", "diff", "full") and r3.ok
    prompts = [r.body["messages"][-1]["content"] for r in fake_ollama.requests_to("/api/chat")]
    assert "<<<<<<< SEARCH" in prompts[1] and "complete new program" in prompts[2]
    assert mut.patch_failures == 0  # reset by the success


def test_server_down_is_a_counted_failure_and_mixed_falls_back_to_params(builder):
    llm = LLMMutator(OllamaLLM(MODEL, host=closed_port_url(), timeout=2, retries=0), builder)
    ctx = PromptContext(TASK_SOURCE, parent())
    r = asyncio.run(llm.propose(request(ctx)))
    assert not r.ok and r.failure_kind == "server_down" and "ollama serve" in r.failure
    mixed = MixedMutator(llm, ParamMutatorAdapter(), llm_share=1.0)
    r = asyncio.run(mixed.propose(request(ctx)))
    assert r.ok and r.mutator == "param" and re.search(r"NUM_WARPS 8→\d+", r.description)
    assert mixed.account.failures_by_kind == {"server_down": 2}


def test_summary_of_a_reply_is_its_first_line_of_prose():
    assert summarize_reply("<think>hmm</think>\nSure!\nUse exp2 for speed.\n```python\nx\n```") \
        == "Use exp2 for speed."
    assert summarize_reply('"""doc"""\nimport torch\nclass ModelNew: pass\n') == ""
    assert summarize_reply("Change one line:\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE") \
        == "Change one line"


def test_the_summary_skips_short_marker_blocks_like_the_parser_accepts():
    from evotui.engine.mutators import summarize_reply

    reply = ("<<< SEARCH\nBLOCK_SIZE = 1024  # the old block\n===\nBLOCK_SIZE = 4096\n>>> REPLACE\n"
             "Use a larger block for better occupancy.")
    assert summarize_reply(reply) == "Use a larger block for better occupancy."
