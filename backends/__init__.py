"""Kernel dialects. A backend knows how to check, load and watch a candidate of its dialect,
and how to talk to the model about it; the evolution core knows nothing dialect-specific."""

from __future__ import annotations

from backends.base import Backend


def get_backend(name: str) -> Backend:
    if name == "triton":
        from backends.triton_backend import TritonBackend

        return TritonBackend()
    raise KeyError(f"unknown backend {name!r} (known: triton)")


def backend_for_source(source: str) -> Backend:
    """Pick the dialect a candidate is written in."""
    return get_backend("triton")


__all__ = ["Backend", "get_backend", "backend_for_source"]
