"""Bytes a candidate's process hands over the moment it produces them.

Each dumped tensor goes into a memfd that the candidate's process fills, seals against any
further write, resize or unseal, and passes to the worker over a socket (``SCM_RIGHTS``),
keeping no descriptor of it. From then on nobody can change those bytes, the candidate's
later code included, so they need no hash: the judge opens the descriptor through the
worker's ``/proc/PID/fd`` and checks the seals itself before reading.

Without a channel (a runner used outside ``run_isolated``) tensors are written to files in
the scratch folder, hashed as they are written, as before.
"""

from __future__ import annotations

import fcntl
import mmap
import os
import secrets
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from evotui.eval.prepared_pages import SEALS, ReadyPool, new_memfd

MAX_BLOBS = 4096  # handed over by one candidate; more is not a harness's doing
KEY_REQUEST = b"key?"
# the device's gate (``ask_gate``): to share it (untimed work), or to have it alone (timing)
GATE_REQUESTS = {b"gpu?": "share", b"gpu!": "alone", b"mem?": "reserve"}

_channel: socket.socket | None = None
_sent = 0
_ready = ReadyPool()  # memfds made ready for outputs to come (``prepare``)


class NotSealed(ValueError):
    """A handed-over descriptor that is not a fully sealed memfd."""


def open_channel(fd: int) -> None:
    """In the candidate's process: hand blobs over through socket ``fd`` from now on."""
    global _channel, _sent
    _channel = socket.socket(fileno=fd)
    _sent = 0


def has_channel() -> bool:
    return _channel is not None


def ask_key() -> int:
    """The fingerprint key (``evotui.eval.digest``), drawn by the worker when asked; it gives
    one per candidate, so the harness asks once, after the last call the key protects."""
    if _channel is None:
        raise RuntimeError("no channel to ask for a key")
    _channel.send(KEY_REQUEST)
    return int(_channel.recv(64))


def ask_gate(mode: str = "share") -> None:
    """Wait until this candidate may use the device: ``share`` for untimed work (its trials
    and checks, beside other candidates' checks and the judge), ``alone`` for its timed
    calls. The pool holds the device's gate that way from the answer until the next ask, or
    until the candidate has answered and been judged (``evotui.eval.device_gate``).
    ``reserve`` waits only for the host memory its outputs will take (before it makes memfds
    ready for them), its use of the device unchanged."""
    if _channel is None:
        raise RuntimeError("no channel to ask for the device")
    _channel.send(next(ask for ask, m in GATE_REQUESTS.items() if m == mode))
    if _channel.recv(16) != b"go":
        raise RuntimeError("the device was not granted")


def prepare(outputs: list[Any], calls: int, pin_for: int | None = None) -> None:
    """Make memfds ready for ``calls`` more calls' outputs like ``outputs`` (one call's),
    page-locked for GPU ``pin_for``'s copies (``evotui.eval.prepared_pages``). Best effort:
    what the host cannot give now is written the ordinary way later."""
    import torch

    sizes: dict[int, int] = {}
    for v in outputs:
        if type(v) is torch.Tensor and v.layout == torch.strided:
            nbytes = v.numel() * v.element_size()
            sizes[nbytes] = sizes.get(nbytes, 0) + calls
    try:
        _ready.prepare(sizes, pin_for)
    except (OSError, MemoryError, RuntimeError):
        pass


def drop_prepared() -> None:
    _ready.close()


def put_tensor(value: Any) -> int:
    """Copy a plain tensor's bytes into a sealed memfd, hand it over, return its index."""
    if _channel is None:
        raise RuntimeError("no channel to hand bytes over")
    import torch

    flat = value.detach().contiguous().reshape(-1).view(torch.uint8)
    nbytes = flat.numel()
    ready = _ready.take(nbytes) if nbytes else None
    if ready is not None:
        try:
            ready.fill(flat)
            return _send_sealed(ready.fd)
        finally:
            ready.close()
    fd = new_memfd()
    try:
        if nbytes:
            _write_all(fd, _host_bytes(flat))
        fcntl.fcntl(fd, fcntl.F_ADD_SEALS, SEALS)
        return _send_sealed(fd)
    finally:
        os.close(fd)


def _send_sealed(fd: int) -> int:
    global _sent
    assert _channel is not None
    index = _sent
    socket.send_fds(_channel, [str(index).encode()], [fd])
    _sent += 1
    return index


_staging: Any = None  # pinned host memory, reused: a GPU's bytes come over at full speed


def _host_bytes(flat: Any) -> memoryview:
    global _staging
    if flat.device.type != "cuda":
        return memoryview(flat.numpy())
    import torch

    n = flat.numel()
    if _staging is None or _staging.numel() < n:
        _staging = None
        _staging = torch.empty(n, dtype=torch.uint8, pin_memory=True)
    view = _staging[:n]
    view.copy_(flat)  # synchronous: the bytes are there when it returns
    return memoryview(view.numpy())


def _write_all(fd: int, data: memoryview) -> None:
    while data:
        data = data[os.write(fd, data):]


@dataclass
class Received:
    """What the worker holds for one candidate: descriptors in the order they came."""

    fds: list[int]
    total_bytes: int = 0
    error: str = ""
    key: int | None = None  # the fingerprint key given to the candidate, once
    gated: bool = False  # it was granted the device's gate (either way)
    waited_s: float = 0.0  # for the gate: not counted against its time limit

    def close(self) -> None:
        for fd in self.fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.fds.clear()


def receive(sock: socket.socket, into: Received, limit_bytes: int,
            gate: Callable[[], None] | None = None) -> bool:
    """Take one handed-over descriptor or request from ``sock`` (worker side); False at end
    of stream. A descriptor that is not sealed, or one past the limits, is closed and noted.
    ``gate(mode)`` blocks until the device's gate is held that way for this candidate."""
    try:
        data, fds, _, _ = socket.recv_fds(sock, 32, 4)
    except (BlockingIOError, InterruptedError):
        return True
    if not data and not fds:
        return False
    if data == KEY_REQUEST and not fds:
        if into.key is not None:
            into.error = into.error or "asked for the fingerprint key twice"
        else:
            into.key = secrets.randbits(62)
        sock.send(str(into.key).encode())
        return True
    if data in GATE_REQUESTS and not fds:
        if gate is not None:
            started = time.monotonic()
            gate(GATE_REQUESTS[data])
            into.waited_s += time.monotonic() - started
        into.gated = into.gated or GATE_REQUESTS[data] != "reserve"
        sock.send(b"go")
        return True
    if not fds:
        into.error = into.error or "sent a request the harness never makes"
        return True
    for fd in fds:
        try:
            size = check_sealed(fd)
        except NotSealed as e:
            os.close(fd)
            into.error = into.error or str(e)
            into.fds.append(-1)
            continue
        if len(into.fds) >= MAX_BLOBS or into.total_bytes + size > limit_bytes:
            os.close(fd)
            into.error = into.error or (
                f"handed over more output than the limits allow ({len(into.fds) + 1} outputs, "
                f"{(into.total_bytes + size) / 2**30:.1f} GiB, past this candidate's share of "
                f"the host memory, {limit_bytes / 2**30:.1f} GiB, or {MAX_BLOBS} outputs); an "
                "honest candidate of a task this big needs a smaller --shape or fewer "
                "candidates at once")
            into.fds.append(-1)
            continue
        into.total_bytes += size
        into.fds.append(fd)
    return True


def check_sealed(fd: int) -> int:
    """The size of memfd ``fd``, if nobody can change its bytes any more."""
    try:
        seals = fcntl.fcntl(fd, fcntl.F_GET_SEALS)
    except OSError:
        raise NotSealed("a handed-over output is not a memfd") from None
    if seals & SEALS != SEALS:
        raise NotSealed("a handed-over output can still be changed (not sealed)")
    return os.fstat(fd).st_size


def path_of(fd: int) -> str:
    """Where a process of the same user opens the worker's descriptor ``fd``."""
    return f"/proc/{os.getpid()}/fd/{fd}"


def read_sealed(path: str) -> Any:
    """The bytes of a handed-over memfd as a uint8 numpy array (judge side), after checking
    its seals here. A private mapping: no copy, and writes to it would stay in this process."""
    import numpy as np

    with open(path, "rb") as f:
        size = check_sealed(f.fileno())
        if size == 0:
            return np.zeros(0, dtype=np.uint8)
        pages = mmap.mmap(f.fileno(), size, flags=mmap.MAP_PRIVATE,
                          prot=mmap.PROT_READ | mmap.PROT_WRITE)
    return np.frombuffer(pages, dtype=np.uint8)
