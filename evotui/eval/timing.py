"""Timing a callable on the GPU, per the protocol in DESIGN §4.

- CUDA events around each call, the L2 flushed before each call (a buffer twice the L2,
  read: zeroing it would leave dirty lines the timed call pays to write back), then every
  SM's shared memory written over (evotui.eval.shared_scrub), warm-up by time, the median
  of many samples (with several input sets, the mean of the sets' medians) and a robust
  spread (IQR / 1.349 / median); a noisy call gets more samples (up to 3 s more) until its
  median is known to ~0.1 %.
- Kernels under ~20 µs: a CUDA graph of several unrolled calls is replayed, and the same
  graph of flushes alone is subtracted. The unrolled calls rotate over the input sets a whole
  number of times, so no call's recycled output block holds its own set's answer.
- A side-stream guard: the same calls timed by the host with a device-wide synchronize must
  not take far longer than the events say (work that escapes the timed stream).
- A sample of calls (random, excluded from the statistics) can run under a watch callback,
  so a candidate cannot tell which calls are checked.
- A value-cache guard (``fresh_vs_same``): calls on new values are timed against calls on
  the same values written again and on those values with one element changed, each call
  prepared alike; a candidate that caches results by value, or recomputes only what changed,
  is fast only on the latter two.
- ``slow_cutoff_ms``: a call whose first estimate is slower than this (the engine passes a
  multiple of the incumbent's time) may be a clear loser: a few flushed samples decide; if
  they confirm it, that is its timing ("coarse"), otherwise it gets the full plan. That
  matters for bad GEMM tilings at ~100 ms a call.

This module runs inside worker processes; it imports torch lazily and nothing else heavy.
"""

from __future__ import annotations

import math
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from evotui.eval.shared_scrub import SharedScrub
from evotui.eval.timing_stats import (  # noqa: F401 - the names a timing's users know it by
    COARSE_SAMPLES,
    EXTRA_SAMPLES_BUDGET_MS,
    FRESH_KINDS,
    GRAPH_THRESHOLD_MS,
    HOST_LEAD_MS,
    LEAD_PER_HOST_MS,
    MIN_SETS_MEMORY_SHARE,
    MIN_TIMING_SETS,
    SLEEP_CYCLES_PER_MS,
    TIMING_SETS_MEMORY_SHARE,
    FreshCheck,
    SamplePlan,
    Timing,
    _central_ms,
    _per_set_medians,
    extra_samples,
    graph_unroll,
    robust_spread_pct,
    sample_plan,
    timing_set_count,
)


class CudaTimer:
    """One per worker process: owns the flush buffer and the captured timing functions."""

    timed_graph: Any = None  # the CUDA graph the last ``time`` measured (method "graph")
    scrub: SharedScrub | None = None  # after each flush

    def __init__(self, device: Any, scrub_shared: bool = True) -> None:  # off: its cost, measured
        import torch

        self.torch = torch
        self.device = device
        props = torch.cuda.get_device_properties(device)
        l2 = int(getattr(props, "L2_cache_size", 0) or 50 * 2**20)
        self.flush_buf = torch.empty(max(2 * l2, 64 * 2**20), dtype=torch.int8, device=device)
        self.scrub = SharedScrub.load(device) if scrub_shared else None
        # Captured before any candidate is imported; identity re-checked afterwards.
        self.Event = torch.cuda.Event
        self.synchronize = torch.cuda.synchronize
        self.elapsed_time = torch.cuda.Event.elapsed_time
        self.perf_counter = time.perf_counter

    def intact(self) -> bool:
        torch = self.torch
        return (torch.cuda.Event is self.Event and torch.cuda.synchronize is self.synchronize
                and torch.cuda.Event.elapsed_time is self.elapsed_time
                and time.perf_counter is self.perf_counter)

    def flush(self) -> None:
        # Read, not written: after zero_() the L2 held ~50 MB of dirty lines that the timed
        # kernel wrote back on its first misses, ~4 µs of a 40 µs RMSNorm and a different
        # amount each run (2-3 % run-to-run spread on the H200; 0.3 % read).
        self.flush_buf.sum()
        if self.scrub is not None:
            self.scrub()  # on the current stream, as the sum

    def time(self, fn: Callable[[], Any], *, warmup_ms: float = 25.0, rep_ms: float = 300.0,
             min_samples: int = 20, max_samples: int = 2000,
             watch: Callable[[Callable[[], Any]], Any] | None = None,
             watch_fraction: float = 0.1, rng: random.Random | None = None,
             slow_cutoff_ms: float | None = None,
             input_set: Callable[[], int] | None = None,
             prepare: Callable[[], None] | None = None, input_sets: int = 1) -> Timing:
        """``input_set``, when the callable rotates over ``input_sets`` input sets: which one
        the next call will use (for the per-set medians). ``prepare`` runs before each warm-up
        and sampled call, outside the timed events (new input values: evotui.eval.perturb)."""
        self.timed_graph = None
        sync = self.synchronize
        fn()
        sync()
        estimate = self._estimate_ms(fn)
        if estimate < GRAPH_THRESHOLD_MS:
            graphed = self._time_graph(fn, rep_ms=rep_ms, watch=watch,
                                       unroll=graph_unroll(input_sets))
            if graphed is not None:
                return graphed
        flush_ms = self._estimate_ms(self.flush)
        lead_ms = self.lead_ms(fn, prepare)
        plan = sample_plan(estimate, flush_ms, warmup_ms=warmup_ms, rep_ms=rep_ms,
                           min_samples=min_samples, max_samples=max_samples,
                           slow_cutoff_ms=slow_cutoff_ms, lead_ms=lead_ms)
        rng = rng or random.Random()
        if plan.method == "coarse":
            # The estimate only proposes "a clear loser"; flushed, host-led samples must
            # confirm it. A call that is fast here after being slow in the estimate gets the
            # full plan below, whose warm-up by time it cannot count.
            times = self._samples(fn, plan.samples, watch, watch_fraction, rng, force_watch=True,
                                  prepare=prepare, lead_ms=lead_ms)
            if slow_cutoff_ms is not None and statistics.median(times) > slow_cutoff_ms:
                synced, tail = self._synced_ms(fn, calls=plan.synced_calls)
                return Timing(median_ms=statistics.median(times),
                              spread_pct=robust_spread_pct(times), samples=len(times),
                              method="coarse", synced_ms=synced, synced_tail_ms=tail)
            plan = sample_plan(estimate, flush_ms, warmup_ms=warmup_ms, rep_ms=rep_ms,
                               min_samples=min_samples, max_samples=max_samples, lead_ms=lead_ms)
        end_at = self.perf_counter() + plan.warmup_ms / 1000
        while self.perf_counter() < end_at:
            if prepare is not None:
                prepare()
            self.flush()
            fn()
        self.synchronize()
        labels: list[int] = []
        times = self._samples(fn, plan.samples, watch, watch_fraction, rng, force_watch=True,
                              input_set=input_set, labels=labels, prepare=prepare, lead_ms=lead_ms)
        more = extra_samples(times, labels, per_sample_ms=estimate + flush_ms + lead_ms)
        if more:
            times += self._samples(fn, more, watch, watch_fraction, rng, input_set=input_set,
                                   labels=labels, prepare=prepare, lead_ms=lead_ms)
        synced, tail = self._synced_ms(fn, calls=plan.synced_calls)
        set_medians = _per_set_medians(times, labels)
        return Timing(
            median_ms=_central_ms(times, set_medians),
            spread_pct=robust_spread_pct(times),
            samples=len(times),
            method=plan.method,
            synced_ms=synced,
            synced_tail_ms=tail,
            set_medians_ms=set_medians,
        )

    def lead_ms(self, fn: Callable[[], Any], prepare: Callable[[], None] | None = None,
                calls: int = 5) -> float:
        """How long the GPU must be kept busy before a timed call so that the host is ahead
        of it: a multiple of the host time of ``prepare`` + ``fn`` (median of ``calls``),
        rounded up to whole steps so that it rarely differs between runs."""
        host = []
        for _ in range(calls):
            t0 = self.perf_counter()
            if prepare is not None:
                prepare()
            fn()
            host.append((self.perf_counter() - t0) * 1000)
        self.synchronize()
        steps = math.ceil(LEAD_PER_HOST_MS * statistics.median(host) / HOST_LEAD_MS)
        return HOST_LEAD_MS * max(1, steps)

    def _lead(self, sleep: Callable[[int], Any] | None, lead_ms: float) -> None:
        if sleep is not None:
            sleep(int(lead_ms * SLEEP_CYCLES_PER_MS))

    def _samples(self, fn: Callable[[], Any], n: int,
                 watch: Callable[[Callable[[], Any]], Any] | None, watch_fraction: float,
                 rng: random.Random, force_watch: bool = False,
                 input_set: Callable[[], int] | None = None,
                 labels: list[int] | None = None,
                 prepare: Callable[[], None] | None = None,
                 lead_ms: float = HOST_LEAD_MS) -> list[float]:
        """``n`` event-timed calls, each after an L2 flush and a host lead; a random share
        runs under ``watch`` instead (left out of the times; at least one if forced: with 20
        samples and a 10 % share, none would be watched one time in eight). With
        ``input_set`` and ``labels``, each kept time's input set is appended to ``labels``."""
        if watch is not None and n <= COARSE_SAMPLES:
            watched = {rng.randrange(n)}  # few samples: exactly one watched, at random
        else:
            watched = {i for i in range(n) if watch is not None and rng.random() < watch_fraction}
            if watch is not None and force_watch and not watched:
                watched = {rng.randrange(n)}
        starts = [self.Event(enable_timing=True) for _ in range(n)]
        ends = [self.Event(enable_timing=True) for _ in range(n)]
        sleep = getattr(self.torch.cuda, "_sleep", None)
        used = []
        for i in range(n):
            if prepare is not None:
                prepare()
            self.flush()
            self._lead(sleep, lead_ms)
            used.append(input_set() if input_set is not None else 0)
            starts[i].record()
            if i in watched and watch is not None:
                watch(fn)
            else:
                fn()
            ends[i].record()
        self.synchronize()
        kept = [i for i in range(n) if i not in watched]
        if labels is not None and input_set is not None:
            labels.extend(used[i] for i in kept)
        return [starts[i].elapsed_time(ends[i]) for i in kept]

    def fresh_vs_same(self, fn: Callable[[], Any], refresh: Callable[[int, str], None],
                      rounds: int = 5) -> FreshCheck:
        """``rounds`` × one call of each of ``FRESH_KINDS``: ``refresh(i, kind)`` writes the
        values, then the call is timed after an L2 flush and a host lead. Each call starts
        from an idle GPU, so no kind inherits a backlog the others do not."""
        sleep = getattr(self.torch.cuda, "_sleep", None)
        lead_ms = self.lead_ms(fn, calls=3)
        events = [[(self.Event(enable_timing=True), self.Event(enable_timing=True))
                   for _ in FRESH_KINDS] for _ in range(rounds)]
        for i in range(rounds):
            for k, kind in enumerate(FRESH_KINDS):
                self.synchronize()
                refresh(i, kind)
                self.flush()
                self._lead(sleep, lead_ms)
                events[i][k][0].record()
                fn()
                events[i][k][1].record()
        self.synchronize()
        medians = [statistics.median(e[k][0].elapsed_time(e[k][1]) for e in events)
                   for k in range(len(FRESH_KINDS))]
        return FreshCheck(medians[0], medians[1], rounds, medians[2])

    def interleaved(self, fns: list[Callable[[], Any]], *, rep_ms: float = 400.0,
                    min_samples: int = 30, max_samples: int = 2000,
                    watch: Callable[[Callable[[], Any]], Any] | None = None,
                    watch_fraction: float = 0.1, rng: random.Random | None = None,
                    prepare: Callable[[int], None] | None = None) -> list[Timing]:
        """Time several callables sample by sample in alternating order (A B, B A, ...), so
        that clock and thermal drift hit all of them alike: the A/B protocol for gains. With
        ``watch``, a random share of each one's samples (at least one) runs under it instead
        and is left out of its times, as in ``time``. ``prepare(k)`` runs before each of
        callable ``k``'s calls, untimed (new values, as before a timed call)."""
        def prepared(k: int) -> Callable[[], None]:
            def run() -> None:
                if prepare is not None:
                    prepare(k)
                fns[k]()
            return run

        for k in range(len(fns)):
            prepared(k)()
        self.synchronize()
        # with what prepare adds: an estimate only sets how many samples fit in rep_ms
        estimates = [self._estimate_ms(prepared(k)) for k in range(len(fns))]
        warm_until = self.perf_counter() + min(max(0.025, 0.04 * sum(estimates)), 0.5)
        while self.perf_counter() < warm_until:
            for k in range(len(fns)):
                self.flush()
                prepared(k)()
        self.synchronize()
        leads = [self.lead_ms(fns[k], None if prepare is None else (lambda k=k: prepare(k)), calls=3)
                 for k in range(len(fns))]
        per_round = sum(estimates) + sum(leads) + len(fns) * self._estimate_ms(self.flush)
        n = max(min_samples, min(max_samples, int(rep_ms / max(per_round, 1e-3))))
        sleep = getattr(self.torch.cuda, "_sleep", None)
        events = [[(self.Event(enable_timing=True), self.Event(enable_timing=True)) for _ in range(n)]
                  for _ in fns]
        rng = rng or random.Random()
        watched: list[set[int]] = []
        for _ in fns:
            chosen = {i for i in range(n) if watch is not None and rng.random() < watch_fraction}
            watched.append(chosen or ({rng.randrange(n)} if watch is not None else set()))
        for i in range(n):
            order = range(len(fns)) if i % 2 == 0 else reversed(range(len(fns)))
            for k in order:
                if prepare is not None:
                    prepare(k)
                self.flush()
                self._lead(sleep, leads[k])
                events[k][i][0].record()
                if watch is not None and i in watched[k]:
                    watch(fns[k])
                else:
                    fns[k]()
                events[k][i][1].record()
        self.synchronize()
        out = []
        for k in range(len(fns)):
            times = [a.elapsed_time(b) for i, (a, b) in enumerate(events[k]) if i not in watched[k]]
            out.append(Timing(median_ms=statistics.median(times), spread_pct=robust_spread_pct(times),
                              samples=len(times), method="interleaved"))
        return out

    def _estimate_ms(self, fn: Callable[[], Any], calls: int = 5) -> float:
        start, end = self.Event(enable_timing=True), self.Event(enable_timing=True)
        self.synchronize()
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        self.synchronize()
        return start.elapsed_time(end) / calls

    def _synced_ms(self, fn: Callable[[], Any], calls: int = 10) -> tuple[float, float]:
        """Host-timed calls from an idle GPU, each followed by a device-wide synchronize:
        the median whole call, and the median wait after the call returned. An honest call's
        wait is at most its own kernels' time; work left on another stream lengthens it (the
        host time of the call itself is no evidence either way: the events count it)."""
        whole, tail = [], []
        for _ in range(calls):
            self.flush()
            self.synchronize()
            t0 = self.perf_counter()
            fn()
            t1 = self.perf_counter()
            self.synchronize()
            t2 = self.perf_counter()
            whole.append((t2 - t0) * 1000)
            tail.append((t2 - t1) * 1000)
        return statistics.median(whole), statistics.median(tail)

    def _time_graph(self, fn: Callable[[], Any], *, rep_ms: float, unroll: int = 20,
                    watch: Callable[[Callable[[], Any]], Any] | None = None) -> Timing | None:
        torch = self.torch
        def body(with_fn: bool) -> Callable[[], None]:
            def run() -> None:
                for _ in range(unroll):
                    self.flush()  # on the capture stream: captured with the calls
                    if with_fn:
                        fn()
            return run

        graphs = []
        try:
            stream = torch.cuda.Stream(self.device)
            stream.wait_stream(torch.cuda.current_stream(self.device))
            with torch.cuda.stream(stream):
                for with_fn in (True, False):
                    body(with_fn)()  # warm inside the capture stream
                    g = torch.cuda.CUDAGraph()
                    with torch.cuda.graph(g, stream=stream):
                        if with_fn and watch is not None:
                            watch(body(True))  # the calls that get replayed are watched
                        else:
                            body(with_fn)()
                    graphs.append(g)
            torch.cuda.current_stream(self.device).wait_stream(stream)
            self.synchronize()
        except Exception:  # not capturable (host syncs inside forward, ...): plain events
            self.synchronize()
            return None
        full, flush_only = graphs
        self.timed_graph = full  # replayed once more on new values for the judge
        for g in graphs:
            g.replay()
        self.synchronize()
        per_replay = self._estimate_ms(full.replay, calls=3)
        n = max(10, min(500, int(rep_ms / max(per_replay, 1e-3) / 2)))
        diffs = []
        for _ in range(n):
            a = self._replay_ms(full)
            b = self._replay_ms(flush_only)
            diffs.append(max(a - b, 0.0) / unroll)
        return Timing(
            median_ms=statistics.median(diffs),
            spread_pct=robust_spread_pct(diffs),
            samples=n,
            method="graph",
            synced_ms=None,
        )

    def replay_timed_graph(self) -> bool:
        """Replay the graph the last ``time`` measured (method "graph"), to the end; False
        when it measured none. Its calls read the inputs in place, so a replay after new
        values were written into them must give those values' answers."""
        graph = self.timed_graph
        if graph is None:
            return False
        graph.replay()
        self.synchronize()
        return True

    def _replay_ms(self, graph: Any) -> float:
        start, end = self.Event(enable_timing=True), self.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        return start.elapsed_time(end)
