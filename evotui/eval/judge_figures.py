"""The judge's figures (a part of ``Judge``): what it times itself, so a candidate cannot slow
it (the device's facts, each task's eager and ``torch.compile`` baselines, a same-size copy),
and a timed candidate's speedups, % of roofline and % of a copy from them.

What it times needs the device alone: the pool asks for ``prime`` once per task and judge
process, with the device's gate held alone (``evotui.eval.device_gate``); judging itself then
only reads what was timed, beside other candidates' untimed work."""

from __future__ import annotations

import types
from typing import Any

from evotui.core import reasons
from evotui.eval.device_rates import measure_device_facts, peak_bytes_per_s, time_baselines
from evotui.eval.messages import Request, TimingReport
from evotui.eval.verdict_checks import Reject
from evotui.task.model import roofline_of

BASELINE_SEED = 12345


class JudgeFigures:
    torch: Any
    device: Any
    timer: Any
    models: dict[tuple[str, str, int], Any]

    def __init__(self) -> None:
        self.baseline_cache: dict[str, dict[str, Any]] = {}
        self.copy_ms: dict[int, float] = {}  # bytes moved -> a plain copy's time
        self.facts: dict[str, Any] | None = None

    # provided by Judge
    def _task(self, path: str, sha256: str | None) -> tuple[str, types.ModuleType]:
        raise NotImplementedError

    def _reference(self, req: Request, shape_index: int, seed: int,
                   perturbed: int = 0) -> tuple[list[Any], list[Any]]:
        raise NotImplementedError

    def prime(self, req: Request) -> None:
        """Time what judging ``req``'s candidates will read: the device's facts, the task's
        baselines and, for a memory-bound task, a copy of its bytes."""
        if self.timer is None:
            return
        facts = self.device_facts()
        self.baselines(req)
        _, task = self._task(req.task, req.task_sha256)
        inputs, refs = self._reference(req, 0, BASELINE_SEED)
        roof = roofline_of(task, inputs, refs)
        if _memory_bound(roof, facts):
            self._copy_ms(int(roof["bytes"]))

    def _figures(self, req: Request, timing: TimingReport) -> dict[str, float | None]:
        if self.device.type != "cuda" or timing.method == "interpreter":
            return {}
        facts = self.device_facts()
        _, task = self._task(req.task, req.task_sha256)
        inputs, refs = self._reference(req, 0, timing.seed)
        roof = roofline_of(task, inputs, refs)
        floor_ms = max(roof["bytes"] / facts["copy_bytes_per_s"],
                       roof["flops"] / facts["matmul_flops_per_s"]) * 1000
        # the reject floor uses the fastest known data rate: a kernel that mostly reads beats
        # the copy rate honestly (the row-sum seed reaches 101 % of it on the H200)
        limit_ms = max(roof["bytes"] / peak_bytes_per_s(facts),
                       roof["flops"] / facts["matmul_flops_per_s"]) * 1000
        median = timing.median_ms
        if median < 0.9 * limit_ms:
            raise Reject(reasons.BELOW_ROOFLINE,
                         f"{median * 1000:.2f} µs per call, but moving the data takes at least "
                         f"{limit_ms * 1000:.2f} µs on this GPU")
        base = self.baselines(req)
        eager, compiled = base.get("eager_ms"), base.get("compile_ms")
        out = {"roofline_pct": 100.0 * floor_ms / median, "eager_ms": eager,
               "compile_ms": compiled, "speedup_eager": eager / median if eager else None,
               "speedup_compile": compiled / median if compiled else None}
        if _memory_bound(roof, facts):
            out["copy_ms"] = self._copy_ms(int(roof["bytes"]))
            out["copy_pct"] = 100.0 * out["copy_ms"] / median
        return out

    def _copy_ms(self, nbytes: int) -> float:
        """A device-to-device copy moving ``nbytes`` in all (half read, half written), timed
        like candidates; cached per size."""
        if nbytes not in self.copy_ms:
            src = self.torch.empty(max(nbytes // 2, 1), dtype=self.torch.int8, device=self.device)
            dst = self.torch.empty_like(src)
            self.copy_ms[nbytes] = self.timer.time(lambda: dst.copy_(src)).median_ms
            del src, dst
        return self.copy_ms[nbytes]

    def device_facts(self) -> dict[str, Any]:
        if self.facts is None:
            self.facts = measure_device_facts(self.torch, self.device)
        return self.facts

    def baselines(self, req: Request) -> dict[str, Any]:
        key, _ = self._task(req.task, req.task_sha256)
        if key not in self.baseline_cache:
            if self.timer is None:
                return {}
            inputs, _ = self._reference(req, 0, BASELINE_SEED)
            model = self.models[(key, repr(req.shapes[0]), req.init_seed)]
            self.baseline_cache[key] = time_baselines(self.torch, self.timer, model, inputs)
        return self.baseline_cache[key]


def _memory_bound(roof: dict[str, float], facts: dict[str, Any]) -> bool:
    return roof["bytes"] / facts["copy_bytes_per_s"] >= roof["flops"] / facts["matmul_flops_per_s"]
