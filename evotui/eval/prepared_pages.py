"""Memfds made ready before the outputs that will fill them exist (candidate side).

Writing a 256 MiB output into a new memfd costs its pages first (allocated and zeroed one
fault at a time), then a copy from the staging buffer, all while the candidate holds the
device. Made ready earlier, before the candidate asks for the device (its host memory
reserved first), a memfd's pages are allocated (``MAP_POPULATE``) and, on a GPU, page-locked
(``cuMemHostRegister``): the output then comes off the device straight into them by DMA, one
copy and no fault.

A ready memfd is a descriptor in the candidate's process while candidate code runs, so it is
treated as the candidate's until sealed: before the copy its size must still be the one it was
made with; after the copy the device is synchronized (no kernel still writes into the pages),
the pages are unregistered and unmapped, and the seals go on. Anything written into it before
is overwritten whole; a mapping the candidate kept writable makes the sealing fail
(``tampered``). Nothing candidate code does between the copy and the seals can run: no
candidate code runs there.
"""

from __future__ import annotations

import fcntl
import mmap
import os
from dataclasses import dataclass
from typing import Any

from evotui.core import reasons
from evotui.eval.failures import CandidateFailure

SEALS = fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE


def tampered(message: str) -> CandidateFailure:
    """A ready memfd was changed by someone else (the candidate) before it was sealed: its
    failure, as any check of the harness's that fires inside its calls."""
    return CandidateFailure(reasons.TAMPERED, message)


@dataclass
class ReadyPages:
    fd: int
    nbytes: int
    pages: mmap.mmap
    host: Any  # a uint8 torch tensor over ``pages``
    pinned: bool  # registered with the CUDA driver

    def fill(self, flat: Any) -> None:
        """Copy the uint8 tensor ``flat`` (``nbytes`` long) in and seal; the fd stays open."""
        import torch

        if os.fstat(self.fd).st_size != self.nbytes:
            raise tampered("a prepared output buffer was resized before it was filled")
        self.host.copy_(flat)
        if flat.device.type == "cuda":
            torch.cuda.synchronize(flat.device)  # every stream: nothing writes here any more
        self.release_pages()
        try:
            fcntl.fcntl(self.fd, fcntl.F_ADD_SEALS, SEALS)
        except OSError as e:  # EBUSY: a writable mapping of it is still open somewhere
            raise tampered(f"a prepared output buffer could not be sealed ({e.strerror})") from None
        if os.fstat(self.fd).st_size != self.nbytes:
            raise tampered("a prepared output buffer was resized while it was filled")

    def release_pages(self) -> None:
        if self.pinned:
            from cuda.bindings import driver

            driver.cuMemHostUnregister(self.host.data_ptr())
            self.pinned = False
        self.host = None
        self.pages.close()

    def close(self) -> None:
        if self.host is not None:
            self.release_pages()
        os.close(self.fd)


MAX_READY_BYTES = 8 << 30  # mapped at once (address space, page-locked memory): no more


class ReadyPool:
    """Memfds ready for outputs of given sizes, taken in any order; sizes nobody made ready
    for, or past ``MAX_READY_BYTES``, are written the ordinary way
    (``evotui.eval.outbox.put_tensor``)."""

    def __init__(self) -> None:
        self._ready: dict[int, list[ReadyPages]] = {}

    def prepare(self, sizes: dict[int, int], pin_for: int | None) -> None:
        """Make ``count`` memfds ready for each ``nbytes`` in ``sizes`` (beyond those ready),
        page-locked for GPU ``pin_for``'s copies unless None."""
        mapped = sum(r.nbytes for have in self._ready.values() for r in have)
        for nbytes, count in sizes.items():
            have = self._ready.setdefault(nbytes, [])
            while 0 < nbytes <= MAX_READY_BYTES - mapped and len(have) < count:
                have.append(_make(nbytes, pin_for))
                mapped += nbytes

    def take(self, nbytes: int) -> ReadyPages | None:
        have = self._ready.get(nbytes)
        return have.pop() if have else None

    def count(self) -> int:
        return sum(len(v) for v in self._ready.values())

    def close(self) -> None:
        """Give back what was never used (at the end of a request)."""
        for have in self._ready.values():
            while have:
                have.pop().close()


def new_memfd() -> int:
    """A memfd for one output, to be sealed once written (``SEALS``)."""
    return os.memfd_create("evotui-output", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)


def _make(nbytes: int, pin_for: int | None) -> ReadyPages:
    import torch

    fd = new_memfd()
    try:
        os.ftruncate(fd, nbytes)
        pages = mmap.mmap(fd, nbytes, flags=mmap.MAP_SHARED | mmap.MAP_POPULATE)
    except BaseException:
        os.close(fd)
        raise
    host = torch.frombuffer(pages, dtype=torch.uint8)
    pinned = pin_for is not None and _pin(host.data_ptr(), nbytes, pin_for)
    return ReadyPages(fd, nbytes, pages, host, pinned)


def _pin(address: int, nbytes: int, ordinal: int) -> bool:
    """Page-lock for the device's DMA, through the driver API (a failure there leaves no
    error pending for torch's next launch to report). Not pinned: the copy is slower, never
    wrong."""
    from cuda.bindings import driver

    from evotui.dialects.cuda.launcher import ensure_context

    ensure_context(ordinal)
    pages = -(-nbytes // mmap.PAGESIZE) * mmap.PAGESIZE  # the mapping's whole pages
    result = driver.cuMemHostRegister(address, pages, 0)
    err = result[0] if isinstance(result, tuple) else result
    return err == driver.CUresult.CUDA_SUCCESS
