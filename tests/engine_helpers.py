"""Stand-ins for engine tests: an instant evaluator and a scripted mutator."""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import Callable
from typing import Any

from evotui.engine.mutators import LLMAccount, Mutation, MutationRequest, Mutator
from evotui.eval.evaluator import Evaluator
from evotui.eval.results import EvalRequest, EvalResult
from tests.conftest import CANDIDATES, SAMPLES

# The softmax seed as it was when it declared one tunable (NUM_WARPS, 6 choices): a small,
# fixed search space for tests that count evaluations, distil "NUM_WARPS 8→4" or snapshot the
# TUI, whatever the sample seed's space grows to.
SOFTMAX_SEED_PATH = CANDIDATES / "softmax" / "honest_num_warps_only.py"
SOFTMAX_SEED = SOFTMAX_SEED_PATH.read_text()
ADD_GELU_SEED = (SAMPLES / "add_gelu" / "seed.py").read_text()
_INT = re.compile(r"^(NUM_WARPS|BLOCK_SIZE)\s*=\s*(\d+)", re.MULTILINE)


def modelled_time(source: str) -> float:
    """A smooth made-up cost: best at NUM_WARPS 4 and BLOCK_SIZE 2048."""
    values = {k: int(v) for k, v in _INT.findall(source)}
    t = 1.0 + 0.1 * abs(math.log2(values.get("NUM_WARPS", 4)) - 2)
    t += 0.05 * abs(math.log2(values.get("BLOCK_SIZE", 2048)) - 11)
    return t


class FakeEvaluator(Evaluator):
    """Judges instantly (after ``delay``) with ``judge(source)``; records every request.
    Neither compares nor sanitizes (the ``Evaluator`` defaults)."""

    def __init__(self, judge: Callable[[str], EvalResult] | None = None, delay: float = 0.0,
                 lanes: int = 1, cpu: bool = False) -> None:
        self.judge = judge or self.default_judge
        self.delay = delay
        self.lanes = [object() for _ in range(lanes)]
        self.devices = ["cpu"] if cpu else [f"cuda:{i}" for i in range(lanes)]
        self._cpu = cpu
        self.requests: list[EvalRequest] = []
        self.active = 0
        self.max_active = 0
        self.waiting = 0
        self.max_waiting = 0
        self._free: asyncio.Semaphore | None = None

    @property
    def is_cpu(self) -> bool:
        return self._cpu

    def default_judge(self, source: str) -> EvalResult:
        if "BROKEN" in source:
            return EvalResult.rejected("mismatch", "output differs from the reference")
        t = modelled_time(source)
        return EvalResult(True, "accepted", "ok", time_ms=t, spread_pct=0.2,
                          speedup_eager=1.2 / t, speedup_compile=1.1 / t, roofline_pct=50 / t)

    async def aevaluate(self, request: EvalRequest) -> EvalResult:
        self.requests.append(request)
        if self._free is None:
            self._free = asyncio.Semaphore(len(self.lanes))
        self.waiting += 1
        self.max_waiting = max(self.max_waiting, self.waiting)
        async with self._free:  # one evaluation per lane, like the pool
            self.waiting -= 1
            self.active += 1
            self.max_active = max(self.max_active, self.active)
            try:
                await asyncio.sleep(self.delay)
                return self.judge(request.source)
            finally:
                self.active -= 1


class ScriptedMutator(Mutator):
    """A mutator whose children come from ``make(parent_source, n)``: a source, or a
    ``Mutation`` (e.g. a failure)."""

    name = "llm"
    model: str | None = "scripted"

    def __init__(self, make: Callable[[str, int], str | Mutation], delay: float = 0.0) -> None:
        self.make = make
        self.delay = delay
        self.account = LLMAccount()
        self.requests: list[MutationRequest] = []

    async def propose(self, request: MutationRequest, on_chunk: Any = None) -> Mutation:
        self.requests.append(request)
        n = len(self.requests)
        self.account.calls += 1
        if on_chunk is not None:
            on_chunk(f"thinking about {request.parent.id}…")
        await asyncio.sleep(self.delay)
        out = self.make(request.parent.source, n)
        if isinstance(out, Mutation):
            if out.failure_kind:
                self.account.fail(out.failure_kind)
            return out
        return Mutation(out, "llm", self.model, "full", description=f"variant {n}")

    def state(self) -> dict[str, Any]:
        return {"account": self.account.as_dict()}

    def load_state(self, state: dict[str, Any]) -> None:
        self.account = LLMAccount.from_dict(state.get("account") or {})

    async def aclose(self) -> None:
        pass


def tagged(source: str, n: int) -> str:
    """``source`` plus a distinct module constant: a new program with the same behaviour."""
    return source.rstrip("\n") + f"\n\nEVO_VARIANT_{n} = {n}\n"
