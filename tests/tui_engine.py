"""A real engine over stand-ins, for the TUI's key flows and ``bench/bench_tui.py``: an
instant evaluator and a streaming scripted mutator; ``stand_in_process`` runs it in the
engine's host process as ``evotui run`` does."""

from __future__ import annotations

import asyncio
import random
from collections import deque
from pathlib import Path
from typing import Any

from evotui.engine.loop import Engine
from evotui.engine.mutators import LLMAccount, Mutation, MutationRequest, Mutator
from evotui.engine.rundir import RunDir
from evotui.engine.session import RunOptions, Session
from evotui.engine.state import EngineConfig
from evotui.eval.results import EvalResult
from evotui.task.model import resolve_task
from evotui.tui.process import EngineProcess
from tests.conftest import ROOT, SAMPLES
from tests.engine_helpers import SOFTMAX_SEED, FakeEvaluator
from tests.tui_helpers import set_warps


# ---- a real engine over stand-ins ---------------------------------------------------------------
class StreamingMutator(Mutator):
    """Proposes NUM_WARPS/BLOCK variants of the parent (new every time) and streams a few
    chunks like a model would; ``delay`` seconds per proposal."""

    name = "llm"
    model: str | None = "stand-in"

    def __init__(self, delay: float = 0.0, chunks: int = 3, seed: int = 0) -> None:
        self.delay = delay
        self.chunks = chunks
        self.account = LLMAccount()
        self.requests: deque[MutationRequest] = deque(maxlen=100)  # the latest prompts
        self.proposed = 0
        self._rng = random.Random(seed)

    async def propose(self, request: MutationRequest, on_chunk: Any = None) -> Mutation:
        self.requests.append(request)
        self.proposed += 1
        n = self.proposed
        self.account.calls += 1
        for i in range(self.chunks):
            if on_chunk is not None:
                on_chunk(f"token{i} ")
            if self.delay:
                await asyncio.sleep(self.delay / max(1, self.chunks))
        warps = self._rng.choice([1, 2, 4, 8, 16])
        src = request.parent.source.replace("NUM_WARPS = ", f"EVO_{n} = {n}\nNUM_WARPS = ", 1)
        src = set_warps(src, warps)
        ctx = request.context
        prompt = [{"role": "user", "content": "hints: " + " | ".join(ctx.hints)
                   + "\nadvice:\n" + ctx.advice_block}]
        return Mutation(src, "llm", self.model, "full", description=f"variant {n}: warps {warps}",
                        prompt=prompt, reply=f"NUM_WARPS = {warps}")

    def state(self) -> dict[str, Any]:
        return {"account": self.account.as_dict()}

    def load_state(self, state: dict[str, Any]) -> None:
        self.account = LLMAccount.from_dict(state.get("account") or {})

    async def aclose(self) -> None:
        pass


def judge(source: str) -> EvalResult:
    """Instant verdicts: warps 1 is rejected, the rest timed by a made-up smooth cost."""
    warps = next((int(x.split("=")[1]) for x in source.splitlines()
                  if x.startswith("NUM_WARPS = ")), 8)
    if warps == 1:
        return EvalResult.rejected("mismatch", "output differs from the reference")
    noise = (hash(source) % 1000) / 1e5
    t = 0.2 + 0.02 * abs(warps - 4) + noise
    return EvalResult(True, "accepted", "ok", time_ms=t, spread_pct=0.2,
                      speedup_eager=0.281 / t, speedup_compile=0.152 / t,
                      roofline_pct=40 * 0.281 / t)


class InstantEvaluator(FakeEvaluator):
    def __init__(self, delay: float = 0.0, lanes: int = 1) -> None:
        super().__init__(judge=judge, delay=delay, lanes=lanes)


class MessyMutator(StreamingMutator):
    """A model that fails every second answer, as small local models do: no code, the parent
    again (a duplicate, which the engine refuses), an edit that does not apply."""

    FAILURES = (("no_code", "the answer holds no code block"), ("duplicate", ""),
                ("patch_failed", "SEARCH block 1 does not match the parent"))

    async def propose(self, request: MutationRequest, on_chunk: Any = None) -> Mutation:
        if self.proposed % 2 == 0:
            return await super().propose(request, on_chunk)
        self.proposed += 1
        self.account.calls += 1
        if on_chunk is not None:
            on_chunk("I think the kernel is already optimal. ")
        if self.delay:
            await asyncio.sleep(self.delay)
        kind, why = self.FAILURES[(self.proposed // 2) % len(self.FAILURES)]
        if kind == "duplicate":  # the engine finds it evaluated already
            return Mutation(request.parent.source, "llm", self.model, "full",
                            description="no change")
        self.account.fail(kind)
        return Mutation(None, "llm", self.model, "full", failure_kind=kind, failure=why)


class BrokenMutator(StreamingMutator):
    async def propose(self, request: MutationRequest, on_chunk: Any = None) -> Mutation:
        raise RuntimeError("the stand-in mutator broke")


async def stand_in_session(run_dir: str, *, iterations: int = 200, delay: float = 0.05,
                           eval_delay: float = 0.0, memory: str | None = "library",
                           lanes: int = 1, chunks: int = 3, broken: bool = False,
                           messy: bool = False,
                           config: dict[str, Any] | None = None,
                           mutator: Any = None) -> Session:
    """A session whose engine evolves softmax over stand-ins (an instant evaluator and a
    streaming scripted mutator); ``memory="library"`` attaches the real advice library
    (``EVOTUI_HOME``). Importable by ``python -m evotui.tui.host --factory``."""
    task = resolve_task(SAMPLES / "softmax")
    evaluator = InstantEvaluator(eval_delay, lanes)
    mut = mutator or (BrokenMutator() if broken else MessyMutator(delay, chunks) if messy
                      else StreamingMutator(delay, chunks))
    hook = None
    if memory == "library":
        from evotui.memory.hook import MemoryHook
        from evotui.memory.store import AdviceStore

        hook = MemoryHook(AdviceStore(), k=3)
    rd = RunDir(Path(run_dir))
    engine = Engine(task, evaluator, mut, EngineConfig(iterations=iterations, **(config or {})),
                    seed_source=SOFTMAX_SEED, memory=hook, run_dir=rd)
    return Session(engine, evaluator, rd, RunOptions(task=str(task.path)), mut.name,
                   owns_evaluator=False)


def stand_in_process(run_dir: Path, **kwargs: Any) -> EngineProcess:
    """The engine host process over ``stand_in_session(run_dir, **kwargs)``."""
    return EngineProcess(factory="tests.tui_engine:stand_in_session",
                         factory_kwargs={"run_dir": str(run_dir), **kwargs},
                         env={"PYTHONPATH": str(ROOT)})
