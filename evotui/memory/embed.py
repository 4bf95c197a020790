"""Embeddings for advice retrieval: Ollama ``/api/embed`` plus a vector cache on disk.

Vectors live outside TinyDB, in ``EVOTUI_HOME/embeddings/<model>.npz`` (text hash → unit
vector), so the library file stays small and a model change simply starts a new cache.
Retrieval only ever reads the cache (``cached``: no network, never blocks); ``embed``
(async) asks the server for what is missing and saves it — call it ahead of time
(``MemoryHook.warm``). Several processes may save at once: the cache is merged under a
file lock and replaced atomically.
"""

from __future__ import annotations

import io
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

import numpy as np
from filelock import FileLock

from evotui.memory.atomic import atomic_write_bytes
from evotui.memory.text import text_hash

BATCH = 64


class Embedder(Protocol):
    model: str

    def cached(self, texts: Sequence[str]) -> list[np.ndarray | None]: ...

    async def embed(self, texts: Sequence[str]) -> list[np.ndarray]: ...

    @property
    def version(self) -> int: ...


def _unit(v: Sequence[float] | np.ndarray) -> np.ndarray:
    a = np.asarray(v, dtype=np.float32)
    n = float(np.linalg.norm(a))
    return a / n if n > 0 else a


class VectorCache:
    """Text hash → unit vector, for one embedding model, persisted as one ``.npz``."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = FileLock(str(path) + ".lock", timeout=60)
        self._vecs: dict[str, np.ndarray] = {}
        self._mutex = threading.Lock()
        self._loaded_sig: tuple[int, int] | None = None
        self.version = 0  # bumps whenever vectors are added (retrieval re-aligns its matrix)

    def _sig(self) -> tuple[int, int] | None:
        try:
            st = self.path.stat()
        except OSError:
            return None
        return (st.st_ino, st.st_mtime_ns)

    def _load(self) -> dict[str, np.ndarray]:
        try:
            with np.load(self.path, allow_pickle=False) as z:
                keys, mat = z["keys"], z["vecs"]
        except (OSError, ValueError, KeyError):
            return {}
        return {str(k): mat[i] for i, k in enumerate(keys)}

    def refresh(self) -> None:
        """Pick up vectors other processes saved."""
        sig = self._sig()
        if sig is None or sig == self._loaded_sig:
            return
        with self._mutex:
            loaded = self._load()
            new = {k: v for k, v in loaded.items() if k not in self._vecs}
            if new:
                self._vecs.update(new)
                self.version += 1
            self._loaded_sig = sig

    def get(self, key: str) -> np.ndarray | None:
        return self._vecs.get(key)

    def put(self, items: dict[str, np.ndarray]) -> None:
        if not items:
            return
        with self._mutex:
            self._vecs.update(items)
            self.version += 1
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock:
            merged = self._load()
            merged.update(self._vecs)
            dims = {v.shape for v in merged.values()}
            if len(dims) > 1:  # a model that changed its size: keep the newest vectors
                shape = next(iter(items.values())).shape
                merged = {k: v for k, v in merged.items() if v.shape == shape}
            keys = np.array(sorted(merged), dtype="U32")
            mat = np.stack([merged[k] for k in keys]).astype(np.float32)
            buf = io.BytesIO()
            np.savez(buf, keys=keys, vecs=mat)
            atomic_write_bytes(self.path, buf.getvalue())
            with self._mutex:
                self._vecs.update({k: v for k, v in merged.items() if k not in self._vecs})
                self._loaded_sig = self._sig()


def _slug(model: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", model).strip("_") or "model"


class OllamaEmbedder:
    """Embeds with one Ollama embedding model (default ``nomic-embed-text``), cached."""

    def __init__(
        self,
        model: str | None = None,
        host: str | None = None,
        cache_dir: Path | None = None,
        timeout: float = 60.0,
    ) -> None:
        from evotui.config import DEFAULT_EMBED_MODEL, home

        self.model = model or DEFAULT_EMBED_MODEL
        self.host = host
        self.timeout = timeout
        folder = cache_dir or (home() / "embeddings")
        self.cache = VectorCache(folder / f"{_slug(self.model)}.npz")
        self.cache.refresh()
        self._llm = None

    @property
    def version(self) -> int:
        return self.cache.version

    def cached(self, texts: Sequence[str]) -> list[np.ndarray | None]:
        self.cache.refresh()
        return [self.cache.get(text_hash(t)) for t in texts]

    async def available(self) -> bool:
        """Is the server up with this model pulled? Never raises."""
        from evotui.llm import has_model, probe

        status = await probe(self.host, timeout=3.0)
        return status.reachable and has_model(status, self.model)

    async def embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Unit vectors for ``texts`` (from the cache, the rest from the server).
        Raises ``evotui.llm.LLMError`` when the server or the model is not there."""
        from evotui.llm import OllamaLLM

        keys = [text_hash(t) for t in texts]
        self.cache.refresh()
        missing: dict[str, str] = {}
        for k, t in zip(keys, texts, strict=True):
            if self.cache.get(k) is None:
                missing.setdefault(k, t)
        if missing:
            if self._llm is None:
                self._llm = OllamaLLM(self.model, host=self.host, timeout=self.timeout, retries=1)
            todo = list(missing.items())
            got: dict[str, np.ndarray] = {}
            for i in range(0, len(todo), BATCH):
                chunk = todo[i : i + BATCH]
                vecs = await self._llm.embed([t for _, t in chunk], self.model)
                got.update({k: _unit(v) for (k, _), v in zip(chunk, vecs, strict=True)})
            self.cache.put(got)
        out = []
        for k in keys:
            v = self.cache.get(k)
            assert v is not None
            out.append(v)
        return out

    async def aclose(self) -> None:
        if self._llm is not None:
            await self._llm.aclose()
