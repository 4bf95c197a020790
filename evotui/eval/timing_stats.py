"""The numbers of a timing, without a GPU: what a timing records (``Timing``), how many
samples a call gets, when the value-cache guard's figures mean a cache, how many input sets
fit on a device, and the statistics over the samples (``evotui.eval.timing`` measures)."""

from __future__ import annotations

import math
import statistics
from dataclasses import asdict, dataclass
from typing import Any

from evotui.eval.json_fields import Fields, is_number

GRAPH_THRESHOLD_MS = 0.020
# Before each timed call the GPU is kept busy (after the L2 flush), so that the host has
# enqueued the call before the GPU reaches it: otherwise a call whose Python overhead exceeds
# the lead is timed partly as host latency (seen: 12 % spread on RMSNorm). The lead covers
# LEAD_PER_HOST_MS times the host time of one call (its Python, the launch checks, the new
# input values), in whole steps of HOST_LEAD_MS: a fixed 200 µs fell short of a 150 µs host
# call plus the perturbation (a false `cached_results`), and a lead that varied with each
# run's measured host time moved a 40 µs kernel's median between runs.
HOST_LEAD_MS = 0.5
LEAD_PER_HOST_MS = 3.0
SLEEP_CYCLES_PER_MS = 2_000_000  # torch.cuda._sleep spins cycles: about 2 GHz
COARSE_SAMPLES = 5
# A noisy call's extra samples stop here: 1.5 s left cross-entropy at 0.64 % between runs
# (~175 samples, standard error ~0.16 %; H200).
EXTRA_SAMPLES_BUDGET_MS = 3000.0


@dataclass(frozen=True)
class Timing:
    median_ms: float
    spread_pct: float  # robust coefficient of variation, in %
    samples: int
    method: str  # "events", "graph", "coarse" (a clear loser, few samples) or "interpreter"
    synced_ms: float | None = None  # host-timed with device sync, launch included
    # of that, the wait for the device after the call returned (side-stream guard)
    synced_tail_ms: float | None = None
    # when the timed calls rotate over several input sets: the median of each set's samples
    # (sets that differ: placement; runs that differ with steady sets: the card drifting)
    set_medians_ms: tuple[float, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def read(f: Fields) -> dict[str, Any]:
        """Its fields, read from a message (a report's timing holds them among others)."""
        return {"median_ms": f.number("median_ms"), "spread_pct": f.number("spread_pct"),
                "samples": f.integer("samples"), "method": f.text("method"),
                "synced_ms": f.number("synced_ms", None),
                "synced_tail_ms": f.number("synced_tail_ms", None),
                "set_medians_ms": tuple(float(x) for x in f.seq("set_medians_ms", is_number,
                                                                "numbers"))}

    @staticmethod
    def from_json(value: Any, what: str = "the timing") -> Timing:
        return Timing(**Timing.read(Fields(value, what)))


# What the value-cache guard writes into the inputs before each of its calls (a round is one
# of each, in this order): new values; the same values written again; the same values with
# one element changed, as between two timed calls (evotui.eval.perturb).
FRESH_KINDS = ("new", "same", "patch")


@dataclass(frozen=True)
class FreshCheck:
    """Median times of calls on new input values, on the same values written again, and on
    those values with one element changed. Every call is prepared by the same work (the
    values written, the L2 flushed, from an idle GPU), so only what the values are differs."""

    fresh_ms: float
    same_ms: float
    rounds: int
    patch_ms: float | None = None

    def looks_cached(self, interpreter: bool) -> bool:
        """Slower on new values than on a repeat (a cache keyed on the values hits) or on a
        one-element change (a kernel that recomputes only what changed since the previous
        call: the timed calls see exactly such changes) beyond noise. GPU timings are steady
        to a few %, the CPU interpreter's wall clock much less so: there the figures are the
        fastest of the rounds, and a hit that still launches a copy kernel and reads a few
        values back is only ~3.5× faster than computing (softmax sample), so the bar sits at
        2× (a first positive is confirmed on new rounds before it counts)."""
        fast = self.same_ms if self.patch_ms is None else min(self.same_ms, self.patch_ms)
        if interpreter:
            return self.fresh_ms > 2.0 * fast and self.fresh_ms - fast > 2.0
        return self.fresh_ms > 1.25 * fast and self.fresh_ms - fast > 0.005

    def merged(self, other: FreshCheck) -> FreshCheck:
        """Both measurements as one: the fastest of each kind (noise only ever adds time)."""
        patch = (None if self.patch_ms is None or other.patch_ms is None
                 else min(self.patch_ms, other.patch_ms))
        return FreshCheck(min(self.fresh_ms, other.fresh_ms), min(self.same_ms, other.same_ms),
                          self.rounds + other.rounds, patch)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_json(value: Any, what: str = "the value-cache check") -> FreshCheck:
        f = Fields(value, what)
        return FreshCheck(f.number("fresh_ms"), f.number("same_ms"), f.integer("rounds"),
                          f.number("patch_ms", None))


@dataclass(frozen=True)
class SamplePlan:
    warmup_ms: float
    samples: int
    synced_calls: int
    method: str  # "events" or "coarse"


def sample_plan(estimate_ms: float, flush_ms: float, *, warmup_ms: float = 25.0,
                rep_ms: float = 300.0, min_samples: int = 20, max_samples: int = 2000,
                slow_cutoff_ms: float | None = None, lead_ms: float = HOST_LEAD_MS) -> SamplePlan:
    """How long to warm up and how many event samples to take for a call of ``estimate_ms``."""
    if slow_cutoff_ms is not None and estimate_ms > slow_cutoff_ms:
        return SamplePlan(0.0, COARSE_SAMPLES, 3, "coarse")
    warm = min(max(warmup_ms, 40 * estimate_ms), 500.0)
    n = int(rep_ms / max(estimate_ms + flush_ms + lead_ms, 1e-3))
    return SamplePlan(warm, max(min_samples, min(max_samples, n)), 10, "events")


def extra_samples(times: list[float], labels: list[int], per_sample_ms: float, *,
                  target_pct: float = 0.1, budget_ms: float = EXTRA_SAMPLES_BUDGET_MS,
                  max_samples: int = 2000) -> int:
    """How many more samples a noisy call needs for its median to be known to ``target_pct``
    (standard error of a median: 1.25 σ / √n), within ``budget_ms`` more. σ is the spread
    within input sets (placement differences between sets are not noise more samples
    remove). A cross-entropy seed (1.7 % per call, ~25 samples at a 10 ms lead) moved 1-2 %
    between runs in new processes (H200); quiet kernels take none."""
    if len(times) < 4:
        return 0
    centred = times
    if len(labels) == len(times) and len(set(labels)) > 1:
        medians = {s: statistics.median(t for t, k in zip(times, labels, strict=True) if k == s)
                   for s in set(labels)}
        overall = statistics.median(times)
        centred = [t - medians[k] + overall for t, k in zip(times, labels, strict=True)]
    spread = robust_spread_pct(centred)
    needed = math.ceil((1.2533 * spread / target_pct) ** 2)
    affordable = int(budget_ms / max(per_sample_ms, 1e-3))
    return max(0, min(needed - len(times), affordable, max_samples - len(times)))


# The timed input sets may fill this share of the GPU's memory. Each set sits elsewhere in
# memory and a run's time is the mean of the sets' medians: with 3 sets cross-entropy moved
# 0.64-0.72 % between runs in new processes, with 12 sets 0.12 % (add_gelu 0.72 -> 0.37 %;
# H200). 12 of cross-entropy's ~0.5 GB sets are 6 GB, 4 % of an H200.
TIMING_SETS_MEMORY_SHARE = 0.08
MIN_TIMING_SETS = 3  # what a GPU times where they fit in MIN_SETS_MEMORY_SHARE
MIN_SETS_MEMORY_SHARE = 0.25


def timing_set_count(asked: int, set_bytes: int, device_bytes: int) -> int:
    """How many of the ``asked`` input sets a GPU evaluation times, ``set_bytes`` being one
    set's inputs and outputs: as many as fit in ``TIMING_SETS_MEMORY_SHARE`` of the device;
    at least ``MIN_TIMING_SETS`` where those fit in ``MIN_SETS_MEMORY_SHARE``; never fewer
    than one. (KernelBench's element-wise shapes are 12.8 GB a set: 2 on an H200.)
    The pool decides it; the worker times exactly those sets and the judge checks them."""
    per_set = max(set_bytes, 1)
    count = min(asked, int(TIMING_SETS_MEMORY_SHARE * device_bytes) // per_set)
    if count < MIN_TIMING_SETS:
        count = max(count, min(asked, MIN_TIMING_SETS, int(MIN_SETS_MEMORY_SHARE * device_bytes) // per_set))
    return max(1, count)


def robust_spread_pct(values: list[float]) -> float:
    if len(values) < 4:
        return 0.0
    q = statistics.quantiles(values, n=4)
    med = statistics.median(values)
    return 100.0 * (q[2] - q[0]) / 1.349 / med if med > 0 else 0.0


def graph_unroll(input_sets: int, calls: int = 20) -> int:
    """How many calls a timing graph unrolls: about ``calls``, a whole number of rotations
    over the input sets. The graph replays without new values or poisoned releases, and a
    call's output gets the block freed two calls before; were that call on the same set
    (at the wrap from one replay to the next), the block would hold its answer."""
    sets = max(1, input_sets)
    return sets * max(1, round(calls / sets))


def _central_ms(times: list[float], set_medians: tuple[float, ...]) -> float:
    """The run's time: with several input sets, the mean of their medians. Sets differ by
    where they were placed in memory (cross-entropy's 512 MB sets: up to 3 % within a run),
    and the median of the pooled samples jumps between the sets' values from run to run;
    every set weighing the same moved it less (H200, 5 runs in new processes: add_gelu
    0.55 → 0.42 %, cross_entropy 0.97 → 0.72 %; its history is in git)."""
    return statistics.fmean(set_medians) if set_medians else statistics.median(times)


def _per_set_medians(times: list[float], labels: list[int]) -> tuple[float, ...]:
    if len(labels) != len(times) or len(set(labels)) < 2:
        return ()
    return tuple(statistics.median(t for t, k in zip(times, labels, strict=True) if k == s)
                 for s in sorted(set(labels)))
