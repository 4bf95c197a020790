"""Every failed LLM call ends as an ``LLMError`` whose ``kind`` is one of ``ERROR_KINDS``
and whose message says how to fix it where we know how (``classify``).

How the official client (0.6.x) reports trouble, and what we make of it:

- HTTP error status → ``ollama.ResponseError`` with ``status_code`` (404 for an unknown
  model); a bare ``{"error": ...}`` line inside a 200 stream → ``ResponseError`` with
  ``status_code == -1``;
- server down → builtin ``ConnectionError`` for plain calls, but raw ``httpx.ConnectError``
  for streaming calls;
- slow server → ``httpx.TimeoutException`` (from the httpx timeout) or our own
  ``asyncio.timeout`` → ``TimeoutError``.
"""

from __future__ import annotations

import json

import httpx
import pydantic

from evotui.llm.official_client import ollama

ERROR_KINDS = (
    "server_down",
    "model_missing",
    "timeout",
    "stream_error",
    "empty_reply",
    "http_error",
)
RETRYABLE_STATUS = {408, 429, 500, 502, 503, 504}


class LLMError(Exception):
    """A failed LLM call. ``kind`` is one of ``ERROR_KINDS``; ``str(err)`` is for humans."""

    def __init__(
        self,
        kind: str,
        message: str,
        *,
        retryable: bool = False,
        status_code: int | None = None,
        attempts: int = 1,
    ) -> None:
        if kind not in ERROR_KINDS:
            raise ValueError(f"unknown LLMError kind {kind!r}")
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.retryable = retryable
        self.status_code = status_code
        self.attempts = attempts

    def __str__(self) -> str:
        if self.attempts > 1:
            return f"{self.message} (after {self.attempts} attempts)"
        return self.message


def classify(exc: BaseException, *, host: str, model: str | None, timeout: float) -> LLMError:
    """Turn whatever the client raised into an ``LLMError`` with a helpful message."""
    if isinstance(exc, LLMError):
        return exc
    where = f"the Ollama server at {host}"
    if isinstance(exc, ollama.ResponseError):
        code, detail = exc.status_code, str(exc.error).strip()
        if code == 404 and model is None and "model" not in detail:
            return LLMError(
                "server_down",
                f"{where} does not answer Ollama's API (HTTP 404 on /api/tags): is it an "
                "Ollama server? Point OLLAMA_HOST (or --ollama-host) at one",
                status_code=code,
            )
        if code == 404 and "not found" in detail and (model is None or "model" in detail):
            name = model or "MODEL"
            return LLMError(
                "model_missing",
                f"model '{name}' is not on {where}: pull it with `ollama pull {name}` "
                f"(`ollama list` shows what is installed)",
                status_code=code,
            )
        if code == -1:
            return LLMError(
                "stream_error", f"Ollama reported an error mid-stream: {detail}", retryable=True
            )
        return LLMError(
            "http_error",
            f"{where} answered HTTP {code}: {detail}",
            retryable=code in RETRYABLE_STATUS,
            status_code=code,
        )
    if isinstance(exc, httpx.TimeoutException | TimeoutError):
        return LLMError(
            "timeout",
            f"no complete reply from {model or 'Ollama'} within {timeout:g} s: the model may be "
            "loading or too slow here; raise the timeout, pick a smaller model or lower num_predict",
            retryable=True,
        )
    if isinstance(exc, httpx.ConnectError | ConnectionError):
        return LLMError(
            "server_down",
            f"cannot reach {where}: start it with `ollama serve`, or point OLLAMA_HOST "
            "(or --ollama-host) at a running server",
            retryable=True,
        )
    if isinstance(exc, httpx.RequestError | json.JSONDecodeError | pydantic.ValidationError):
        return LLMError(
            "stream_error",
            f"the reply stream from {where} broke: {type(exc).__name__}: {exc}",
            retryable=True,
        )
    raise TypeError(f"not an Ollama failure: {exc!r}") from exc


# What the client can raise for a failed request (anything else is a bug and propagates).
FAILURES = (
    ollama.ResponseError,
    httpx.RequestError,
    ConnectionError,
    TimeoutError,
    json.JSONDecodeError,
    pydantic.ValidationError,
    LLMError,
)
