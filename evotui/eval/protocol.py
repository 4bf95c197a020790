"""The private channel between the pool and its worker processes.

Messages are JSON (never pickle: a worker that ran candidate code is not trusted, and
unpickling its bytes would run its code in the parent). Tensors travel as raw bytes in files
inside a per-lane scratch folder (on /dev/shm where it exists), described by ``TensorMeta``.
"""

from __future__ import annotations

import hashlib
import json
import os
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
    ipc: dict[str, Any] | None = None  # a CUDA IPC handle to the same bytes
    # of the file's bytes as written: candidate code that runs after the dump (the next
    # call) cannot rewrite the file unseen (round 12 mapped it with `from_file`)
    sha256: str | None = None

    @staticmethod
    def from_dict(d: dict[str, Any]) -> TensorMeta:
        return TensorMeta(
            type_name=str(d["type_name"]),
            shape=tuple(int(x) for x in d["shape"]),
            dtype=str(d["dtype"]),
            device=str(d["device"]),
            file=d.get("file"),
            ipc=d.get("ipc"),
            sha256=d.get("sha256"),
        )


def dump_tensor(value: Any, path: Path, keep: list[Any] | None = None) -> dict[str, Any]:
    """Describe a worker-side value and make its bytes available to the judge (worker side).

    CPU tensors are written to ``path``. CUDA tensors are cloned and shared through a CUDA
    IPC handle (no host round trip); the clone must stay alive in ``keep`` until the judge
    has copied it, which it does before the worker runs anything else.
    """
    import torch

    type_name = f"{type(value).__module__}.{type(value).__qualname__}"
    if type(value) is torch.Tensor:
        type_name = "torch.Tensor"
    if isinstance(value, torch.Tensor):
        plain = value.detach().as_subclass(torch.Tensor)
        meta: dict[str, Any] = {"type_name": type_name, "shape": list(plain.shape),
                                "dtype": str(plain.dtype), "device": plain.device.type, "file": None}
        if plain.device.type == "cuda" and keep is not None:
            copy = plain.contiguous().clone().reshape(-1).view(torch.uint8)
            keep.append(copy)
            meta["ipc"] = _share_cuda(copy)
        else:
            raw = plain.contiguous().reshape(-1).view(torch.uint8).cpu().numpy()
            raw.tofile(path)
            meta["file"], meta["sha256"] = str(path), hashlib.sha256(raw).hexdigest()
        return meta
    return {"type_name": type_name, "shape": [], "dtype": "", "device": "", "file": None}


class TamperedOutput(ValueError):
    """A dumped output's bytes are not those the worker wrote."""


def load_tensor(meta: TensorMeta, device: str = "cpu"):
    """Rebuild a tensor from a worker's bytes (runs in the judge)."""
    import numpy as np
    import torch

    dtype = getattr(torch, meta.dtype.removeprefix("torch."), None)
    if not isinstance(dtype, torch.dtype) or (meta.file is None and meta.ipc is None):
        raise ValueError(f"cannot load tensor of dtype {meta.dtype!r}")
    numel = 1
    for s in meta.shape:
        numel *= s
    expected = numel * torch.empty((), dtype=dtype).element_size()
    if meta.ipc is not None:
        t = _open_cuda(meta.ipc, expected, device)
    else:
        raw = np.fromfile(meta.file, dtype=np.uint8)
        if raw.size != expected:
            raise ValueError(f"tensor file holds {raw.size} bytes, expected {expected}")
        if meta.sha256 is None or hashlib.sha256(raw).hexdigest() != meta.sha256:
            raise TamperedOutput(f"{Path(meta.file).name} changed after the worker wrote it")
        t = torch.from_numpy(raw)
        if device != "cpu":
            t = t.to(device)
    return t.view(dtype).reshape(meta.shape)


_IPC_FIELDS = ("device", "handle", "size_bytes", "offset_bytes", "ref_counter_handle",
               "ref_counter_offset", "event_handle", "event_sync_required")


def _share_cuda(flat_bytes: Any) -> dict[str, Any]:
    import base64

    parts = flat_bytes.untyped_storage()._share_cuda_()
    out = {}
    for name, value in zip(_IPC_FIELDS, parts, strict=True):
        out[name] = {"b64": base64.b64encode(value).decode()} if isinstance(value, bytes) else value
    out["numel"] = flat_bytes.numel()
    out["offset"] = flat_bytes.storage_offset()
    return out


def _open_cuda(ipc: dict[str, Any], expected: int, device: str) -> Any:
    """Copy the shared bytes into the judge's own memory at once and let the mapping go."""
    import base64

    import torch
    from torch.multiprocessing.reductions import rebuild_cuda_tensor

    def field(name: str) -> Any:
        v = ipc[name]
        return base64.b64decode(v["b64"]) if isinstance(v, dict) else v

    if int(ipc["numel"]) != expected:
        raise ValueError(f"shared tensor holds {ipc['numel']} bytes, expected {expected}")
    shared = rebuild_cuda_tensor(
        torch.Tensor, (int(ipc["numel"]),), (1,), int(ipc["offset"]), torch.storage.TypedStorage,
        torch.uint8, int(field("device")), field("handle"), int(field("size_bytes")),
        int(field("offset_bytes")), False, field("ref_counter_handle"),
        int(field("ref_counter_offset")), field("event_handle"), bool(field("event_sync_required")))
    copy = shared.clone().to(device)
    del shared
    return copy
