"""Mutators: turn a parent into a child program.

- ``LLMMutator``: asks a local Ollama model (streaming every chunk to a callback) for
  SEARCH/REPLACE blocks or a full program, and extracts the child with
  ``evotui.engine.patch.extract_program``. After repeated patch failures it switches to
  full rewrites until one works.
- ``ParamMutatorAdapter``: the model-free parameter mutator.
- ``MixedMutator``: one or the other per iteration; the parameter mutator stands in when the
  model side fails, and the model when the parameters are exhausted.

A mutator never raises for model-side trouble: it returns a ``Mutation`` with ``source=None``
and a ``failure_kind`` (an ``evotui.llm.ERROR_KINDS`` kind, or one of ``EXTRACTION_KINDS``),
counted in its ``LLMAccount``.
"""

from __future__ import annotations

import random
import re
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from evotui.engine.param_mutator import ParamMutator
from evotui.engine.patch import PatchResult, extract_program, strip_think
from evotui.engine.population import Candidate
from evotui.engine.prompting import PromptBuilder, PromptContext

if TYPE_CHECKING:
    from evotui.llm import OllamaLLM

EXTRACTION_KINDS = ("no_code", "truncated", "syntax_error", "patch_failed", "no_change")
EXHAUSTED = "exhausted"  # the parameter mutator found no untried setting (not a model failure)
DUPLICATE = "duplicate"  # the child is a program already evaluated (set by the engine)
# failures that say the model side is unavailable, not that one answer was bad
UNAVAILABLE = ("server_down", "model_missing", "timeout", "http_error")

ChunkSink = Callable[[str], None]


@dataclass
class LLMAccount:
    """What the model side cost and how often it failed, cumulative over a run (resumes too)."""

    calls: int = 0
    failures: int = 0
    failures_by_kind: dict[str, int] = field(default_factory=dict)
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0

    def fail(self, kind: str) -> None:
        self.failures += 1
        self.failures_by_kind[kind] = self.failures_by_kind.get(kind, 0) + 1

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["failures_by_kind"] = dict(sorted(self.failures_by_kind.items()))
        d["tokens_per_s"] = round(self.completion_tokens / self.seconds, 1) if self.seconds else None
        return d

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> LLMAccount:
        return cls(
            calls=int(data.get("calls", 0)),
            failures=int(data.get("failures", 0)),
            failures_by_kind={str(k): int(v) for k, v in (data.get("failures_by_kind") or {}).items()},
            retries=int(data.get("retries", 0)),
            prompt_tokens=int(data.get("prompt_tokens", 0)),
            completion_tokens=int(data.get("completion_tokens", 0)),
            seconds=float(data.get("seconds", 0.0)),
        )


@dataclass(frozen=True)
class MutationRequest:
    candidate_id: str
    parent: Candidate
    context: PromptContext
    rng: random.Random
    tried: frozenset[str] = frozenset()  # config keys of programs evaluated or queued
    advice: tuple[Any, ...] = ()  # retrieved advice (``evotui.memory.Advice`` or dicts)
    temperature: float | None = None  # None: the model's own (raised for a repeating model)


@dataclass(frozen=True)
class Mutation:
    source: str | None  # the child program; None when the mutation failed
    mutator: str  # "llm" | "param"
    model: str | None = None
    mode: str = ""  # "diff" | "full" | "param"
    description: str = ""
    failure_kind: str | None = None
    failure: str | None = None
    prompt: list[dict[str, str]] = field(default_factory=list)  # the messages sent, if any
    reply: str = ""  # the model's raw answer, if any
    # the advice this child owes something to: None = all that was shown (a prompt); a
    # tuple = only these (the parameter mutator says which advice it followed, if any)
    advice_ids: tuple[str, ...] | None = None
    # ``tunables.config_key(source)`` when known: computed once per child, then carried
    # (the parameter mutator has it from its search; the engine fills it in otherwise)
    key: str = ""

    @property
    def ok(self) -> bool:
        return self.source is not None


class Mutator(ABC):
    """What the engine calls on a mutator; the three below and the tests' stand-ins subclass
    it. Every member is always there: a mutator without a model keeps ``model_side``'s
    default (None), so no caller asks whether it holds one."""

    name: str  # "llm" | "param" | "mixed"
    model: str | None
    account: LLMAccount

    @abstractmethod
    async def propose(self, request: MutationRequest, on_chunk: ChunkSink | None = None) -> Mutation:
        """A child of ``request.parent``, or a failed ``Mutation`` saying why there is none."""

    def state(self) -> dict[str, Any]:
        """What a checkpoint keeps of this mutator (the default: nothing)."""
        return {}

    def load_state(self, state: dict[str, Any]) -> None:
        """Take back what ``state`` gave (a resumed run; the default: nothing to take)."""
        return None

    async def aclose(self) -> None:
        """Let go of the model's connections (the default: none held)."""
        return None

    def model_side(self) -> LLMMutator | None:
        """The mutator that talks to a model: it writes generation 0 for a run without a
        seed, lends its temperature and describes gains after the run. The default: None
        (no model)."""
        return None


def extraction_kind(result: PatchResult) -> str:
    """Map ``extract_program``'s error message to a stable failure kind."""
    error = result.error or ""
    if error.startswith("truncated"):
        return "truncated"
    if error.startswith("syntax error"):
        return "syntax_error"
    if error == "no change":
        return "no_change"
    if result.mode == "diff":
        return "patch_failed"
    return "no_code"


_FENCED = re.compile(r"(```|~~~).*?(\1|\Z)", re.DOTALL)
# the marker spellings patch.py accepts (3+ signs, aider's ORIGINAL/UPDATED)
_BLOCK = re.compile(r"<{3,}\s*(?:SEARCH|ORIGINAL).*?(>{3,}\s*(?:REPLACE|UPDATED)|\Z)",
                    re.DOTALL | re.IGNORECASE)


_CODE_START = ("import ", "from ", "class ", "def ", "@", '"""', "'''")


def summarize_reply(reply: str, limit: int = 120) -> str:
    """The first line of prose in a model's answer (what it says it changed); '' when the
    answer is only code."""
    text = _BLOCK.sub("", _FENCED.sub("", strip_think(reply)))
    for raw in text.splitlines():
        if raw.lstrip().startswith(_CODE_START):
            return ""  # a bare program: no prose before it
        line = raw.strip().strip("#*>-` ").rstrip(":").strip()
        if len(line) >= 8 and not line.lower().startswith(("here is", "here's", "sure")):
            return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"
    return ""


class ParamMutatorAdapter(Mutator):
    """The parameter mutator behind the ``Mutator`` interface; no model, no tokens.

    Retrieved advice that suggests tunable moves (``evotui.memory.suggest``) is followed
    first with probability ``advice_share``, best-ranked advice first: an optional
    reference, never an order — the rest of the time it explores as without memory. The
    child records only the advice it followed (``Mutation.advice_ids``)."""

    name = "param"
    model: str | None = None

    def __init__(self, inner: ParamMutator | None = None, advice_share: float = 0.5) -> None:
        self.inner = inner or ParamMutator()
        self.advice_share = advice_share
        self.account = LLMAccount()

    async def propose(self, request: MutationRequest, on_chunk: ChunkSink | None = None) -> Mutation:
        if request.advice and request.rng.random() < self.advice_share:
            followed = self._follow(request)
            if followed is not None:
                return followed
        parent = request.parent
        m = self.inner.mutate(parent.source, request.rng, set(request.tried), parent.config_key)
        if m is None:
            return Mutation(None, "param", mode="param", failure_kind=EXHAUSTED,
                            failure=f"no untried setting of {request.parent.id}'s tunables",
                            advice_ids=())
        return Mutation(m.source, "param", mode="param", description=m.description,
                        advice_ids=(), key=m.key)

    def _follow(self, request: MutationRequest) -> Mutation | None:
        from evotui.memory.suggest import tunable_hints

        for item in request.advice:
            hints = tunable_hints(item)
            m = self.inner.follow(request.parent.source, hints, set(request.tried),
                                  request.parent.config_key) if hints else None
            if m is not None:
                aid = str(item.get("id") if isinstance(item, dict) else getattr(item, "id", "?"))
                return Mutation(m.source, "param", mode="param", advice_ids=(aid,),
                                description=f"{m.description} (advice {aid})", key=m.key)
        return None

    def load_state(self, state: dict[str, Any]) -> None:
        # keep the model's figures of an earlier part of the run (resumed without a model)
        self.account = LLMAccount.from_dict(state.get("account") or {})


class LLMMutator(Mutator):
    """Mutations from a local model. ``diff_share`` of the prompts ask for SEARCH/REPLACE
    blocks, the rest for a full program; after ``full_after`` patch failures in a row every
    prompt asks for a full program until one yields a child."""

    name = "llm"

    def __init__(self, llm: OllamaLLM, builder: PromptBuilder, diff_share: float = 0.7,
                 full_after: int = 2) -> None:
        self.llm = llm
        self.model: str | None = llm.model
        self.builder = builder
        self.diff_share = diff_share
        self.full_after = full_after
        self.account = LLMAccount()
        self.patch_failures = 0
        self._base_retries = 0

    def pick_mode(self, rng: random.Random) -> str:
        if self.patch_failures >= self.full_after:
            return "full"
        return "diff" if rng.random() < self.diff_share else "full"

    async def propose(self, request: MutationRequest, on_chunk: ChunkSink | None = None) -> Mutation:
        mode = self.pick_mode(request.rng)
        messages = self.builder.messages(request.context, mode)
        return await self.ask(messages, request.parent.source, mode, on_chunk,
                              request.temperature)

    async def ask(self, messages: list[dict[str, str]], parent_source: str, mode: str,
                  on_chunk: ChunkSink | None = None,
                  temperature: float | None = None) -> Mutation:
        """Send ``messages``; the program the answer gives (a full one, or edits of
        ``parent_source``), or why there is none. Counted in ``account``."""
        from evotui.llm import LLMError

        base = Mutation(None, "llm", self.model, mode, prompt=messages)
        self.account.calls += 1
        start = time.monotonic()
        options = {"temperature": temperature} if temperature is not None else None
        try:
            reply = await self.llm.chat(messages, on_chunk=on_chunk, options=options)
        except LLMError as e:
            self.account.seconds += time.monotonic() - start
            self.account.fail(e.kind)
            return replace(base, failure_kind=e.kind, failure=str(e))
        finally:
            self.account.retries = self._base_retries + self.llm.stats.retries
        self.account.seconds += reply.seconds
        self.account.prompt_tokens += reply.prompt_tokens
        self.account.completion_tokens += reply.completion_tokens
        result = extract_program(reply.text, parent_source)
        if not result.ok:
            kind = extraction_kind(result)
            self.account.fail(kind)
            if kind in ("patch_failed", "truncated") and result.mode == "diff":
                self.patch_failures += 1
            return replace(base, mode=result.mode, failure_kind=kind,
                            failure=result.error or kind, reply=reply.text,
                            description=summarize_reply(reply.text))
        self.patch_failures = 0
        description = summarize_reply(reply.text) or (
            f"{result.applied} SEARCH/REPLACE edit(s)" if result.mode == "diff" else "full rewrite")
        return replace(base, source=result.source, mode=result.mode, description=description,
                        reply=reply.text)

    def state(self) -> dict[str, Any]:
        return {"account": self.account.as_dict(), "patch_failures": self.patch_failures}

    def load_state(self, state: dict[str, Any]) -> None:
        self.account = LLMAccount.from_dict(state.get("account") or {})
        self._base_retries = self.account.retries - self.llm.stats.retries
        self.patch_failures = int(state.get("patch_failures", 0))

    async def aclose(self) -> None:
        await self.llm.aclose()

    def model_side(self) -> LLMMutator:
        return self


class MixedMutator(Mutator):
    """Per iteration, the model with probability ``llm_share``, else the parameters. The
    parameter mutator stands in when the model is unavailable; the model when the parameters
    are exhausted."""

    name = "mixed"

    def __init__(self, llm: LLMMutator, param: ParamMutatorAdapter, llm_share: float = 0.5) -> None:
        self.llm = llm
        self.param = param
        self.llm_share = llm_share
        self.model: str | None = llm.model

    @property
    def account(self) -> LLMAccount:
        return self.llm.account

    async def propose(self, request: MutationRequest, on_chunk: ChunkSink | None = None) -> Mutation:
        if request.rng.random() >= self.llm_share:
            m = await self.param.propose(request, on_chunk)
            if m.ok:
                return m
        m = await self.llm.propose(request, on_chunk)
        if m.ok or m.failure_kind not in UNAVAILABLE:
            return m
        fallback = await self.param.propose(request, on_chunk)
        return fallback if fallback.ok else m

    def state(self) -> dict[str, Any]:
        return self.llm.state()

    def load_state(self, state: dict[str, Any]) -> None:
        self.llm.load_state(state)

    async def aclose(self) -> None:
        await self.llm.aclose()

    def model_side(self) -> LLMMutator:
        return self.llm
