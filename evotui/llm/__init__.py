"""Talking to a local Ollama server through the official ``ollama.AsyncClient``.

``OllamaLLM.chat`` streams a reply, hands every chunk to a callback (for the live LLM pane),
counts tokens from the final chunk, enforces an overall timeout per attempt and retries
transient failures with exponential backoff. Every failure ends as an ``LLMError`` whose
``kind`` is one of ``ERROR_KINDS`` and whose message says how to fix it where we know how.

The package: ``client`` (``OllamaLLM``, ``LLMReply``, ``LLMStats``), ``server`` (``probe``,
``ServerStatus``, ``has_model``), ``errors`` (``LLMError``, ``ERROR_KINDS``, ``classify``),
``official_client`` (the ``ollama`` module, imported once).
"""

from evotui.llm.client import LLMReply, LLMStats, OllamaLLM
from evotui.llm.errors import ERROR_KINDS, RETRYABLE_STATUS, LLMError, classify
from evotui.llm.official_client import BAD_HOST_ENV
from evotui.llm.server import DEFAULT_HOST, ServerStatus, has_model, probe

__all__ = [
    "BAD_HOST_ENV", "DEFAULT_HOST", "ERROR_KINDS", "RETRYABLE_STATUS", "LLMError", "LLMReply",
    "LLMStats", "OllamaLLM", "ServerStatus", "classify", "has_model", "probe",
]
