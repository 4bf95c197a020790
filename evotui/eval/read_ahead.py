"""The judge reads a report's handed-over bytes before it takes the device (judge side).

Reading a 256 MiB output out of its memfd and copying it to the device from pageable memory
takes tens of milliseconds of host work, and the judge used to do it while sharing the
device, where every candidate waiting to be timed waited for it. Read ahead, with the judge
taken but not the device (``DeviceGate.judging(reading=...)``), the bytes go into one
page-locked arena reused request after request; the verdict then copies them to the device
by DMA. The seals are checked as they are read (``outbox.read_sealed``), as before: a
descriptor that is not sealed is not read ahead, and ``load_tensor`` refuses it as ever.
Reading ahead decides nothing; what does not fit the arena's budget is read as before.
"""

from __future__ import annotations

import os
from typing import Any

from evotui.eval.outbox import NotSealed, read_sealed

BUDGET_BYTES = 4 << 30  # at most; and at most an eighth of the host's memory
ALIGN = 4096


def budget_bytes() -> int:
    try:
        host = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        host = 8 * BUDGET_BYTES
    return min(BUDGET_BYTES, host // 8)


class ReadAhead:
    def __init__(self, device: Any, budget: int | None = None) -> None:
        import torch

        self.torch = torch
        self.pinned = torch.device(device).type == "cuda"
        self.budget = budget_bytes() if budget is None else budget
        self.arena: Any = None
        # path -> (the memfd's identity, its bytes): a worker's descriptor numbers, and so
        # the paths, come back for later reports' memfds
        self.staged: dict[str, tuple[tuple[int, int], Any]] = {}

    def read(self, paths: list[str | None]) -> int:
        """Read the sealed memfds at ``paths`` into the arena, as far as the budget goes;
        the bytes read."""
        self.staged.clear()
        sources: list[tuple[str, tuple[int, int], Any, int]] = []  # ..., offset in the arena
        total = 0
        for path in dict.fromkeys(p for p in paths if p is not None):
            try:
                raw = read_sealed(path)
                identity = _identity(path)
            except (NotSealed, OSError, ValueError):
                continue  # refused when the verdict loads it
            end = total + -(-raw.size // ALIGN) * ALIGN
            if end > self.budget:
                break
            sources.append((path, identity, raw, total))
            total = end
        if not sources:
            return 0
        self._grow(total)
        for path, identity, raw, offset in sources:
            view = self.arena[offset:offset + raw.size]
            view.copy_(self.torch.from_numpy(raw))
            self.staged[path] = (identity, view)
        return sum(raw.size for _, _, raw, _ in sources)

    def take(self, path: str) -> Any:
        """The bytes read ahead from the memfd now at ``path`` (a uint8 tensor in the
        arena), or None."""
        entry = self.staged.get(path)
        try:
            return entry[1] if entry is not None and entry[0] == _identity(path) else None
        except OSError:
            return None

    def clear(self) -> None:
        self.staged.clear()

    def _grow(self, nbytes: int) -> None:
        if self.arena is not None and self.arena.numel() >= nbytes:
            return
        self.arena = None  # the old one goes first: both would not fit the budget
        self.arena = self.torch.empty(nbytes, dtype=self.torch.uint8, pin_memory=self.pinned)


def _identity(path: str) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_dev, st.st_ino
