"""Inputs after the calls, on a GPU, waiting for their fingerprints.

The judge needs of an input after a call only whether it changed. On a GPU the candidate's
process fingerprints each one (``evotui.eval.digest``) with a key it is given once, after
its last timed call; until then the inputs wait here. They wait on the device, unless a
call's inputs would crowd out the timed sets (KernelBench's biggest tasks hold 7 GB a
tensor) and the host has room: then they wait in the host's memory and go back to the device one at a time to be
fingerprinted, with the device's generator, as the judge does.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from evotui.core import reasons
from evotui.eval.failures import CandidateFailure

# a call's inputs move to the host once they hold more than 1/N of the device's free memory,
# where they hold less than 1/N of the host's free memory
HOST_WHEN_OVER_FREE_INVERSE = 8


@dataclass
class _Waiting:
    entry: list[dict[str, Any]]  # filled in the report once the key is given
    values: list[Any]
    on_host: list[bool]


def _host_free_bytes() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_AVPHYS_PAGES")
    except (ValueError, OSError):
        return 0


class PendingInputs:
    def __init__(self, torch: Any, device: Any) -> None:
        self.torch, self.device = torch, device
        self._waiting: list[_Waiting] = []

    def __bool__(self) -> bool:
        return bool(self._waiting)

    def add(self, values: list[Any]) -> list[dict[str, Any]]:
        """The report's entry for these inputs: empty until ``settle``."""
        torch = self.torch
        movable = [type(v) is torch.Tensor and v.layout == torch.strided
                   and v.device.type == "cuda" for v in values]
        held = sum(v.numel() * v.element_size()
                   for v, m in zip(values, movable, strict=True) if m)
        free, _ = torch.cuda.mem_get_info(self.device)
        if held * HOST_WHEN_OVER_FREE_INVERSE <= free \
                or held * HOST_WHEN_OVER_FREE_INVERSE > _host_free_bytes():
            movable = [False] * len(values)
        waiting = _Waiting([], [v.to("cpu") if m else v
                                for v, m in zip(values, movable, strict=True)], movable)
        self._waiting.append(waiting)
        return waiting.entry

    def settle(self, key: int) -> None:
        """Fingerprint every waiting input with ``key`` into its report entry."""
        from evotui.eval.digest import fingerprint

        torch = self.torch
        for waiting in self._waiting:
            for i, (v, on_host) in enumerate(zip(waiting.values, waiting.on_host, strict=True)):
                meta = {"type_name": f"{type(v).__module__}.{type(v).__qualname__}",
                        "shape": [], "dtype": "", "device": "", "file": None}
                if type(v) is torch.Tensor and v.layout == torch.strided \
                        and v.device.type != "meta":
                    here = v.to(self.device) if on_host else v
                    meta.update(type_name="torch.Tensor", shape=list(v.shape), dtype=str(v.dtype),
                                device=here.device.type, digest=fingerprint(here, key))
                    del here
                elif isinstance(v, torch.Tensor):
                    raise CandidateFailure(reasons.NOT_A_TENSOR, f"input {i} is no longer a "
                                           "plain dense torch.Tensor after the call")
                waiting.entry.append(meta)
        self._waiting.clear()
