"""The private channel between the pool and its worker processes.

Messages are JSON (never pickle: a worker that ran candidate code is not trusted, and
unpickling its bytes would run its code in the parent). Tensors travel as raw bytes in sealed
memfds handed to the worker as they are produced (``evotui.eval.outbox``), or, outside a
sandboxed run, in hashed files in a per-lane scratch folder; ``TensorMeta`` describes them.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

MAX_MESSAGE_BYTES = 16 * 1024 * 1024


def send(conn: Connection, message: dict[str, Any]) -> None:
    conn.send_bytes(json.dumps(message, default=_jsonable).encode())


def recv(conn: Connection) -> dict[str, Any]:
    raw = conn.recv_bytes(MAX_MESSAGE_BYTES)
    value = json.loads(raw)
    if not isinstance(value, dict):
        raise ValueError("malformed message from worker")
    return value


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, Path):
        return str(obj)
    if hasattr(obj, "__dataclass_fields__"):
        return asdict(obj)
    raise TypeError(f"not JSON-serialisable: {type(obj).__name__}")


def scratch_root() -> Path:
    shm = Path("/dev/shm")
    base = shm if shm.is_dir() and os.access(shm, os.W_OK) else Path(os.environ.get("TMPDIR", "/tmp"))
    return base


@dataclass(frozen=True)
class TensorMeta:
    """What a worker says about one tensor it produced; the bytes are in ``file``."""

    type_name: str  # exact type: "torch.Tensor" for a plain tensor
    shape: tuple[int, ...]
    dtype: str  # e.g. "torch.float32"
    device: str  # device type: "cuda" or "cpu"
    file: str | None  # raw little-endian bytes, C-contiguous
    # of the file's bytes as written: candidate code that runs after the dump (the next
    # call) cannot rewrite the file unseen (it could map it with `from_file`)
    sha256: str | None = None
    blob: int | None = None  # instead of a file: the index of a sealed memfd handed over
    digest: Any = None  # of an input on a GPU: its fingerprint (digest.py) instead of its bytes

    @staticmethod
    def from_dict(d: dict[str, Any]) -> TensorMeta:
        return TensorMeta(
            type_name=str(d["type_name"]),
            shape=tuple(int(x) for x in d["shape"]),
            dtype=str(d["dtype"]),
            device=str(d["device"]),
            file=d.get("file"),
            sha256=d.get("sha256"),
            blob=int(d["blob"]) if isinstance(d.get("blob"), int) else None,
            digest=d.get("digest"),
        )


def dump_tensor(value: Any, path: Path) -> dict[str, Any]:
    """Describe a worker-side value and write its bytes to ``path`` (worker side), hashed as
    they are written: the judge reads only those bytes, from a GPU as from the CPU."""
    import torch

    type_name = f"{type(value).__module__}.{type(value).__qualname__}"
    if type(value) is torch.Tensor:
        type_name = "torch.Tensor"
    if isinstance(value, torch.Tensor):
        import evotui.eval.outbox as outbox

        plain = value.detach().as_subclass(torch.Tensor)
        meta = {"type_name": type_name, "shape": list(plain.shape), "dtype": str(plain.dtype),
                "device": plain.device.type, "file": None}
        if outbox.has_channel():
            return {**meta, "blob": outbox.put_tensor(plain)}
        raw = plain.contiguous().reshape(-1).view(torch.uint8).cpu().numpy()
        raw.tofile(path)
        return {**meta, "file": str(path), "sha256": hashlib.sha256(raw).hexdigest()}
    return {"type_name": type_name, "shape": [], "dtype": "", "device": "", "file": None}


class TamperedOutput(ValueError):
    """A dumped output's bytes are not those the worker wrote."""


def load_tensor(meta: TensorMeta, device: str = "cpu", blobs: list[str | None] | None = None,
                read_ahead: Callable[[str], Any] | None = None):
    """Rebuild a tensor from a worker's bytes (runs in the judge). ``blobs``: where the
    worker holds the sealed memfds of the report (``CandidateHost`` sets them);
    ``read_ahead(path)``: those bytes if they were read already (``evotui.eval.read_ahead``)."""
    import numpy as np
    import torch

    from evotui.eval.outbox import NotSealed, read_sealed

    dtype = getattr(torch, meta.dtype.removeprefix("torch."), None)
    if not isinstance(dtype, torch.dtype) or (meta.file is None and meta.blob is None):
        raise ValueError(f"cannot load tensor of dtype {meta.dtype!r}")
    numel = 1
    for s in meta.shape:
        numel *= s
    expected = numel * torch.empty((), dtype=dtype).element_size()
    if meta.blob is not None:
        where = (blobs or [])[meta.blob] if 0 <= meta.blob < len(blobs or []) else None
        if where is None:
            raise TamperedOutput(f"output bytes {meta.blob} were not handed over")
        t = read_ahead(where) if read_ahead is not None else None  # read from it already
        if t is None:
            try:
                t = torch.from_numpy(read_sealed(where))
            except NotSealed as e:
                raise TamperedOutput(str(e)) from None
    else:
        assert meta.file is not None
        raw = np.fromfile(meta.file, dtype=np.uint8)
        if meta.sha256 is None or hashlib.sha256(raw).hexdigest() != meta.sha256:
            raise TamperedOutput(f"{Path(str(meta.file)).name} changed after the worker wrote it")
        t = torch.from_numpy(raw)
    if t.numel() != expected:
        raise ValueError(f"tensor file holds {t.numel()} bytes, expected {expected}")
    if device != "cpu":
        t = t.to(device)
    return t.view(dtype).reshape(meta.shape)
