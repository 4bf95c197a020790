"""``OllamaLLM``: one model on one Ollama server, through the official ``ollama.AsyncClient``.

``OllamaLLM.chat`` streams a reply, hands every chunk to a callback (for the live LLM pane),
counts tokens from the final chunk, enforces an overall timeout per attempt and retries
transient failures with exponential backoff (``errors.classify`` says which are).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

from evotui.llm.errors import FAILURES, LLMError, classify
from evotui.llm.official_client import ollama
from evotui.llm.server import display_host

T = TypeVar("T")


@dataclass(frozen=True)
class LLMReply:
    text: str
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    model: str
    done_reason: str = ""  # "stop", or "length" when num_predict / the context cut it short
    thinking: str = ""  # the model's separate thinking channel, when it has one


@dataclass
class LLMStats:
    """Counters over an ``OllamaLLM``'s life. ``calls``/``failures`` count ``chat()`` calls;
    ``retries`` counts extra attempts after transient failures."""

    calls: int = 0
    failures: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class OllamaLLM:
    """One model on one Ollama server. Reuses its HTTP client within an event loop."""

    def __init__(
        self,
        model: str,
        host: str | None = None,
        timeout: float = 120.0,
        retries: int = 2,
        backoff: float = 1.0,
        options: dict | None = None,
        think: bool | str | None = None,
    ) -> None:
        if not model:
            raise ValueError("OllamaLLM needs a model name")
        self.model = model
        # explicit host > OLLAMA_HOST > the client's default (127.0.0.1:11434)
        self.host: str | None = host or os.environ.get("OLLAMA_HOST") or None
        self.timeout = float(timeout)
        self.retries = max(0, int(retries))
        self.backoff = float(backoff)
        self.options = dict(options or {})
        self.think = think
        self.stats = LLMStats()
        self._client: ollama.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def display_host(self) -> str:
        return display_host(self.host)

    def _get_client(self) -> ollama.AsyncClient:
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            # an httpx client belongs to the loop it first ran on; make one per loop
            self._client = ollama.AsyncClient(host=self.host, timeout=self.timeout + 5.0)
            self._loop = loop
        return self._client

    async def aclose(self) -> None:
        client, self._client, self._loop = self._client, None, None
        if client is not None:
            with contextlib.suppress(Exception):
                await client.close()

    async def __aenter__(self) -> OllamaLLM:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def _retrying(
        self,
        attempt: Callable[[], Awaitable[T]],
        on_retry: Callable[[int, LLMError], None] | None = None,
    ) -> T:
        for n in range(self.retries + 1):
            try:
                return await attempt()
            except FAILURES as exc:
                err = classify(exc, host=self.display_host, model=self.model, timeout=self.timeout)
                if not err.retryable or n == self.retries:
                    err.attempts = n + 1
                    raise err from (None if exc is err else exc)
                self.stats.retries += 1
                if on_retry is not None:
                    on_retry(n + 1, err)
                await asyncio.sleep(self.backoff * (2**n))
        raise AssertionError("unreachable")

    async def chat(
        self,
        messages: list[dict],
        on_chunk: Callable[[str], None] | None = None,
        options: dict | None = None,
    ) -> LLMReply:
        """Stream a chat reply. ``on_chunk`` receives every piece as it arrives: content
        as-is, the thinking channel wrapped in ``<think>`` … ``</think>``, and a one-line
        ``[retry …]`` notice before a retried attempt re-streams from the start. The
        returned ``text`` holds the answer only (no thinking, no notices). ``options``
        override the model's options for this call (a higher ``temperature``)."""
        self.stats.calls += 1
        start = time.monotonic()

        def notice(n: int, err: LLMError) -> None:
            if on_chunk is not None:
                on_chunk(f"\n[retry {n}/{self.retries}: {err.kind}: {err.message}]\n")

        try:
            merged = {**self.options, **(options or {})}
            reply = await self._retrying(
                lambda: self._chat_once(messages, on_chunk, merged), notice)
        except LLMError:
            self.stats.failures += 1
            raise
        finally:
            self.stats.seconds += time.monotonic() - start
        reply = LLMReply(
            reply.text,
            reply.prompt_tokens,
            reply.completion_tokens,
            time.monotonic() - start,
            reply.model,
            reply.done_reason,
            reply.thinking,
        )
        self.stats.prompt_tokens += reply.prompt_tokens
        self.stats.completion_tokens += reply.completion_tokens
        return reply

    async def _chat_once(
        self, messages: list[dict], on_chunk: Callable[[str], None] | None,
        options: dict | None = None,
    ) -> LLMReply:
        client = self._get_client()
        text: list[str] = []
        thinking: list[str] = []
        final: Any = None
        in_think = False
        start = time.monotonic()
        async with asyncio.timeout(self.timeout):
            stream = await client.chat(
                model=self.model,
                messages=messages,
                stream=True,
                options=(self.options if options is None else options) or None,
                think=self.think,
            )
            async with contextlib.aclosing(stream) as parts:
                async for part in parts:
                    msg = part.message
                    if msg.thinking:
                        thinking.append(msg.thinking)
                        if on_chunk is not None:
                            on_chunk(msg.thinking if in_think else "<think>" + msg.thinking)
                        in_think = True
                    if msg.content:
                        text.append(msg.content)
                        if on_chunk is not None:
                            on_chunk(("</think>\n" if in_think else "") + msg.content)
                        in_think = False
                    if part.done:
                        final = part
            if in_think and on_chunk is not None:
                on_chunk("</think>\n")
        if final is None:
            raise LLMError(
                "stream_error",
                f"the reply stream from {self.display_host} ended before the model finished",
                retryable=True,
            )
        answer = "".join(text)
        if not answer.strip():
            why = (
                f"it only produced {sum(map(len, thinking))} characters of thinking"
                if thinking
                else "it produced no text"
            )
            raise LLMError(
                "empty_reply",
                f"{self.model} returned an empty answer ({why}, done_reason="
                f"{final.done_reason or '?'}); a larger num_predict / num_ctx may help",
            )
        return LLMReply(
            text=answer,
            prompt_tokens=int(final.prompt_eval_count or 0),
            completion_tokens=int(final.eval_count or 0),
            seconds=time.monotonic() - start,
            model=final.model or self.model,
            done_reason=final.done_reason or "",
            thinking="".join(thinking),
        )

    async def embed(self, texts: list[str], model: str) -> list[list[float]]:
        """Embed ``texts`` with ``model`` via /api/embed; one vector per text, in order."""
        if not texts:
            return []

        async def once() -> list[list[float]]:
            async with asyncio.timeout(self.timeout):
                resp = await self._get_client().embed(model=model, input=texts)
            vectors = [list(map(float, v)) for v in resp.embeddings]
            if len(vectors) != len(texts):
                raise LLMError(
                    "http_error",
                    f"asked {model} for {len(texts)} embeddings, got {len(vectors)}",
                )
            return vectors

        try:
            return await self._retrying(once)
        except LLMError as err:
            if err.kind == "model_missing":  # name the embedding model, not the chat model
                raise LLMError(
                    "model_missing",
                    f"embedding model '{model}' is not on the Ollama server at "
                    f"{self.display_host}: pull it with `ollama pull {model}`",
                    status_code=err.status_code,
                ) from err
            raise
