"""Which Ollama server, and what it has: its address as shown, ``probe`` (is it there,
which models), ``has_model``."""

from __future__ import annotations

import asyncio
import contextlib
import os
from dataclasses import dataclass

from evotui.llm.errors import FAILURES, classify
from evotui.llm.official_client import BAD_HOST_ENV, ollama

DEFAULT_HOST = "http://127.0.0.1:11434"


@dataclass(frozen=True)
class ServerStatus:
    reachable: bool
    models: tuple[str, ...]
    error: str | None
    bad_address: bool = False  # the address itself is malformed (no server was asked)


def display_host(host: str | None) -> str:
    return host or os.environ.get("OLLAMA_HOST") or DEFAULT_HOST


def _full_name(name: str) -> str:
    """``qwen3`` and ``qwen3:latest`` are the same model to Ollama."""
    return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"


def has_model(status: ServerStatus, name: str) -> bool:
    want = _full_name(name)
    return any(_full_name(m) == want for m in status.models)


async def probe(host: str | None, timeout: float = 3.0) -> ServerStatus:
    """Is an Ollama server there, and which models does it have? Never raises for the
    usual failures (server down, slow, odd answer); they come back in ``error``."""
    shown = display_host(host)
    if host is None and BAD_HOST_ENV:
        return ServerStatus(False, (), BAD_HOST_ENV, bad_address=True)
    try:
        client = ollama.AsyncClient(host=host, timeout=timeout)
    except ValueError as e:  # a malformed address (port not a number, out of range, ...)
        return ServerStatus(False, (), f"{host!r} is not a valid Ollama server address ({e})",
                            bad_address=True)
    try:
        async with asyncio.timeout(timeout):
            listing = await client.list()
    except FAILURES as exc:
        err = classify(exc, host=shown, model=None, timeout=timeout)
        reachable = err.kind not in ("server_down", "timeout")
        return ServerStatus(reachable, (), str(err))
    finally:
        with contextlib.suppress(Exception):
            await client.close()
    names = tuple(m.model or "" for m in listing.models if m.model)
    return ServerStatus(True, names, None)
