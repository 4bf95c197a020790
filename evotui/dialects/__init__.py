"""Kernel dialects. A backend knows how to check, load and watch a candidate of its dialect,
and how to talk to the model about it; the evolution core knows nothing dialect-specific."""

from __future__ import annotations

from evotui.dialects.base import Backend

BACKENDS = ("triton", "cuda")


def get_backend(name: str) -> Backend:
    if name == "triton":
        from evotui.dialects.triton import TritonBackend

        return TritonBackend()
    if name == "cuda":
        from evotui.dialects.cuda import CudaBackend

        return CudaBackend()
    raise KeyError(f"unknown backend {name!r} (known: {', '.join(BACKENDS)})")


def backend_for_source(source: str) -> Backend:
    """Pick the dialect a candidate is written in: a module-level ``CUDA_SOURCE = ...`` makes
    it a CUDA C candidate (never executed as Python), anything else is a Triton module.
    Misrouting is safe both ways: each dialect's own static rules then reject the file."""
    from evotui.dialects.cuda.spec import is_cuda_candidate

    return get_backend("cuda" if is_cuda_candidate(source) else "triton")


__all__ = ["BACKENDS", "Backend", "get_backend", "backend_for_source"]
