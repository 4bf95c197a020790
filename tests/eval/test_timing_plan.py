"""How many samples a timed call gets (the GPU timer's plan; the timer itself runs in GPU
tests), and the robust spread."""

from __future__ import annotations

import random

from evotui.eval.timing import (
    COARSE_SAMPLES,
    EXTRA_SAMPLES_BUDGET_MS,
    extra_samples,
    robust_spread_pct,
    sample_plan,
    timing_set_count,
)


def test_short_calls_get_300_ms_of_samples_after_a_25_ms_warm_up():
    plan = sample_plan(0.134, 0.03)  # the softmax seed on an H200
    assert plan.method == "events" and plan.warmup_ms == 25.0
    assert plan.samples == int(300 / (0.134 + 0.03 + 0.5)) and plan.synced_calls == 10


def test_long_calls_get_at_least_20_samples_and_a_longer_warm_up():
    plan = sample_plan(40.0, 0.03)
    assert (plan.method, plan.samples, plan.warmup_ms) == ("events", 20, 500.0)
    assert sample_plan(2.4, 0.03).warmup_ms == 96.0  # 40 calls' worth


def test_a_call_slow_on_its_estimate_gets_a_few_samples_first():
    slow = sample_plan(100.0, 0.03, slow_cutoff_ms=5.0)
    assert (slow.method, slow.samples, slow.warmup_ms, slow.synced_calls) == (
        "coarse", COARSE_SAMPLES, 0.0, 3)
    # at or under the cutoff, and without one, the full plan
    assert sample_plan(5.0, 0.03, slow_cutoff_ms=5.0).method == "events"
    assert sample_plan(100.0, 0.03).method == "events"


def test_the_host_lead_covers_a_slow_python_call_in_whole_steps():
    """The GPU is kept busy 3× the host time of one call (its perturbation included) before
    each timed call, rounded up to 0.5 ms steps: a 150 µs host call gets 0.5 ms, a 200 µs
    one 1 ms, and fewer samples fit the timing budget."""
    from evotui.eval.timing import HOST_LEAD_MS

    assert HOST_LEAD_MS == 0.5
    for host_ms, lead in ((0.01, 0.5), (0.15, 0.5), (0.2, 1.0), (0.6, 2.0)):
        gpu = _SimulatedGpu(lambda n, host_ms=host_ms: host_ms)  # simulated time is host time
        assert gpu.timer().lead_ms(gpu.fn) == lead, host_ms
    assert sample_plan(0.04, 0.03, lead_ms=1.0).samples == int(300 / (0.04 + 0.03 + 1.0))


def test_robust_spread_ignores_a_single_outlier():
    steady = [1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.0, 1.0]
    assert robust_spread_pct(steady) < 2.0
    assert robust_spread_pct(steady + [50.0]) < 2.5
    assert robust_spread_pct([1.0, 2.0]) == 0.0  # too few to say


class _SimulatedGpu:
    """Just enough of torch.cuda for CudaTimer.time, on a simulated clock (ms): each call of
    the candidate takes ``duration(call_number)``."""

    def __init__(self, duration):
        self.now, self.calls, self.duration = 0.0, 0, duration
        gpu = self

        class Event:
            def __init__(self, enable_timing=True):
                self.t = 0.0

            def record(self):
                self.t = gpu.now

            def elapsed_time(self, end):
                return end.t - self.t

        class Flush:
            def sum(self):
                gpu.now += 0.03

        self.Event, self.flush_buf = Event, Flush()

    def fn(self):
        self.calls += 1
        self.now += self.duration(self.calls)

    def timer(self):
        from types import SimpleNamespace

        from evotui.eval.timing import CudaTimer

        t = object.__new__(CudaTimer)
        t.torch = SimpleNamespace(cuda=SimpleNamespace(_sleep=lambda cycles: self._lead()))
        t.Event, t.flush_buf = self.Event, self.flush_buf
        t.synchronize = lambda: None
        t.perf_counter = lambda: self.now / 1000
        return t

    def _lead(self):
        self.now += 0.2


def test_a_call_that_stays_slow_is_timed_coarsely():
    gpu = _SimulatedGpu(lambda n: 100.0)
    timing = gpu.timer().time(gpu.fn, slow_cutoff_ms=5.0)
    assert timing.method == "coarse" and timing.median_ms == 100.0
    assert gpu.calls < 20  # a handful of calls instead of the full plan's 20+ and warm-up


def test_slow_only_while_estimated_then_fast_gets_the_full_plan():
    """The cheat: slow for the first calls (the estimate), fast when the samples come. The
    samples do not confirm "slow", so the full plan times it, warm-up by time included."""
    gpu = _SimulatedGpu(lambda n: 100.0 if n <= 6 else 1.0)
    timing = gpu.timer().time(gpu.fn, slow_cutoff_ms=5.0)
    assert timing.method == "events" and timing.median_ms == 1.0 and timing.samples >= 20
    honest = _SimulatedGpu(lambda n: 1.0)
    assert honest.timer().time(honest.fn, slow_cutoff_ms=5.0).method == "events"


def test_each_input_set_gets_its_own_median():
    """Calls rotate over three input sets, one placed slower than the others: the timing
    reports each set's median, so a bench can tell placement effects from drift."""
    gpu = _SimulatedGpu(lambda n: 1.0 + 0.1 * ((n - 1) % 3))
    timing = gpu.timer().time(gpu.fn, input_set=lambda: gpu.calls % 3)
    assert [round(m, 6) for m in timing.set_medians_ms] == [1.0, 1.1, 1.2]
    assert round(timing.median_ms, 6) == 1.1
    single = _SimulatedGpu(lambda n: 1.0)
    assert single.timer().time(single.fn).set_medians_ms == ()


def test_every_input_set_weighs_the_same_in_the_time():
    """Two sets placed alike, one slower: the pooled samples' median is the fast sets' time
    and would jump to the slow one's if a few samples moved; the reported time is the mean
    of the sets' medians."""
    gpu = _SimulatedGpu(lambda n: 1.6 if (n - 1) % 3 == 2 else 1.0)
    timing = gpu.timer().time(gpu.fn, input_set=lambda: gpu.calls % 3)
    assert [round(m, 6) for m in timing.set_medians_ms] == [1.0, 1.0, 1.6]
    assert round(timing.median_ms, 6) == 1.2


def test_a_cache_keyed_on_input_values_is_slow_on_new_values_only():
    """Calls on new values vs calls on the same values written again: a value cache computes
    (1 ms) on new values and copies (0.1 ms) on repeats; an honest kernel takes 1 ms on both."""
    seen: set[tuple[int, str]] = set()
    state = {"key": None}

    def refresh(i, kind):
        state["key"] = (i, kind == "patch")

    def cached(n):
        hit = state["key"] in seen
        seen.add(state["key"])
        return 0.1 if hit else 1.0

    cheat = _SimulatedGpu(cached)
    check = cheat.timer().fresh_vs_same(cheat.fn, refresh)
    assert (round(check.fresh_ms, 9), round(check.same_ms, 9), check.rounds) == (1.0, 0.1, 5)
    assert check.looks_cached(interpreter=False)
    honest = _SimulatedGpu(lambda n: 1.0)
    assert not honest.timer().fresh_vs_same(honest.fn, refresh).looks_cached(interpreter=False)


def test_every_kind_of_call_is_prepared_alike_from_an_idle_gpu():
    """The rounds write values before every call (new, the same again, one element changed)
    and synchronise first: a kind that followed a backlog, or skipped the write, would be
    timed in another state than the others (an honest RMSNorm was once rejected so)."""
    events: list[str] = []
    gpu = _SimulatedGpu(lambda n: 1.0)
    timer = gpu.timer()
    timer.synchronize = lambda: events.append("sync")
    check = timer.fresh_vs_same(lambda: events.append("call"),
                                lambda i, kind: events.append(kind), rounds=2)
    # three untimed calls measure the host time the lead must cover, then the rounds
    assert events == ["call"] * 3 + ["sync"] + [
        "sync", "new", "call", "sync", "same", "call", "sync", "patch", "call"] * 2 + ["sync"]
    assert check.patch_ms is not None


def test_the_interpreter_needs_a_clear_gap_to_call_it_a_cache():
    from evotui.eval.timing import FreshCheck

    assert not FreshCheck(fresh_ms=95.0, same_ms=53.0, rounds=4).looks_cached(interpreter=True)
    assert not FreshCheck(fresh_ms=3.0, same_ms=1.2, rounds=4).looks_cached(interpreter=True)
    # the softmax value-keyed cache: a hit still launches a copy kernel
    assert FreshCheck(fresh_ms=18.4, same_ms=5.5, rounds=6).looks_cached(interpreter=True)
    assert not FreshCheck(fresh_ms=1.02, same_ms=1.0, rounds=5).looks_cached(interpreter=False)


def test_perturbations_change_one_element_within_the_tensor_and_replay_exactly():
    import torch

    from evotui.eval.perturb import perturb, replay

    def make():
        g = torch.Generator().manual_seed(3)
        return [torch.randn(8, 6, generator=g).t(), torch.arange(5), torch.rand(7, generator=g)]

    live, pristine = make(), make()
    for i in range(4):
        perturb(live, seed=11, index=i)
    assert not torch.equal(live[0], pristine[0]) and torch.equal(live[1], pristine[1])  # ints stay
    assert set(live[2].tolist()) <= set(pristine[2].tolist())  # values come from the tensor itself
    judged = make()
    replay(judged, seed=11, count=4)
    assert all(torch.equal(a, b) for a, b in zip(live, judged, strict=True))
    other = make()
    replay(other, seed=12, count=4)
    assert not torch.equal(other[0], live[0])


def test_new_values_slower_than_a_one_element_change_is_a_patch_not_a_kernel():
    """Recomputing only what changed since the previous call: cheap after a one-element
    change (what the timed calls see), full cost on new values and on exact repeats."""
    from evotui.eval.timing import FreshCheck

    assert FreshCheck(fresh_ms=1.50, same_ms=1.49, rounds=5, patch_ms=0.1).looks_cached(interpreter=False)
    assert not FreshCheck(fresh_ms=1.50, same_ms=1.49, rounds=5, patch_ms=1.48).looks_cached(interpreter=False)
    assert not FreshCheck(fresh_ms=1.50, same_ms=1.49, rounds=5).looks_cached(interpreter=False)



def test_the_below_roofline_floor_uses_the_fastest_known_data_rate():
    """A kernel that mostly reads honestly beats the copy rate (reads and writes): the floor
    uses the read rate, or the datasheet bandwidth when cuda-python reports it."""
    from evotui.eval.device_rates import peak_bytes_per_s

    assert peak_bytes_per_s({"copy_bytes_per_s": 4.2e12}) == 4.2e12
    assert peak_bytes_per_s({"copy_bytes_per_s": 4.2e12, "read_bytes_per_s": 4.5e12}) == 4.5e12
    assert peak_bytes_per_s({"copy_bytes_per_s": 4.2e12, "read_bytes_per_s": 4.5e12,
                             "theoretical_bytes_per_s": 4.8e12}) == 4.8e12


def test_a_second_measurement_keeps_the_fastest_of_each_kind():
    """A cache is confirmed on more rounds before it counts: merged, a burst of load that
    slowed the first new-value calls goes, a cache that is slow on new values every time stays."""
    from evotui.eval.timing import FreshCheck

    burst = FreshCheck(fresh_ms=81.0, same_ms=26.0, rounds=3, patch_ms=27.0)
    calm = FreshCheck(fresh_ms=25.0, same_ms=25.5, rounds=3, patch_ms=26.0)
    assert burst.looks_cached(interpreter=True)
    merged = burst.merged(calm)
    assert (merged.fresh_ms, merged.same_ms, merged.patch_ms, merged.rounds) == (25.0, 25.5, 26.0, 6)
    assert not merged.looks_cached(interpreter=True)
    cache = FreshCheck(fresh_ms=80.0, same_ms=8.0, rounds=3, patch_ms=8.5)
    assert cache.merged(FreshCheck(79.0, 8.2, 3, 8.4)).looks_cached(interpreter=True)


def test_interleaved_samples_are_watched_at_random_and_left_out():
    """The A/B timing watches a random share of each candidate's samples (at least one), as
    an evaluation's timing does; watched samples are not in the figures."""
    import random

    gpu = _SimulatedGpu(lambda n: 1.0)
    watched_calls: list[object] = []

    def watch(fn):
        watched_calls.append(fn)
        gpu.now += 50.0  # a watched call is slow: it must not reach the median
        fn()

    a, b = (lambda: gpu.fn()), (lambda: gpu.fn())
    # most samples watched: were they counted, the median would be the watched calls' 51 ms
    timings = gpu.timer().interleaved([a, b], watch=watch, watch_fraction=0.6,
                                      rng=random.Random(1), min_samples=30)
    assert a in watched_calls and b in watched_calls
    assert all(t.median_ms == 1.0 for t in timings)
    unwatched = gpu.timer().interleaved([a, b], rng=random.Random(1), min_samples=30)
    assert all(t.samples > timings[0].samples for t in unwatched)


def test_a_timing_graph_rotates_over_the_input_sets_a_whole_number_of_times():
    """Replayed back to back, the graph's last calls run just before its first: with 20 calls
    over 3 sets, call 0 (set 0) would get the block call 18 (set 0, the same values: no
    perturbation inside a graph) wrote its answer into."""
    from evotui.eval.timing import graph_unroll

    for sets in (1, 2, 3, 5, 8):
        unroll = graph_unroll(sets)
        assert unroll % sets == 0 and 15 <= unroll <= 24, (sets, unroll)
        # call j's output block was call j-2's, around the wrap too: never the same set
        if sets >= 3:
            assert all((j - 2) % unroll % sets != j % sets for j in range(unroll))


def test_a_perturbation_leaves_the_version_counter():
    """The perturbation before each prepared call once moved an input's `_version` by
    one, the timer's other calls by none; a candidate computed half the rows on +1 calls.
    Written through another tensor on the same storage, it moves no counter, and lands where
    the judge's replay puts it (strided inputs too)."""
    import torch

    from evotui.eval.perturb import perturb

    x = torch.randn(64, 33)
    view = x[:, 1:]
    pristine = x.clone()
    perturb([x], seed=7, index=0)
    perturb([view], seed=7, index=1)
    assert x._version == 0 and view._version == 0
    assert not torch.equal(x, pristine)
    replayed = pristine.clone()
    perturb([replayed], seed=7, index=0)
    perturb([replayed[:, 1:]], seed=7, index=1)
    assert torch.equal(replayed, x)


def test_a_noisy_call_gets_more_samples_and_a_quiet_one_none():
    rng = random.Random(3)
    quiet = [1.0 + rng.gauss(0, 0.001) for _ in range(100)]
    noisy = [1.0 + rng.gauss(0, 0.017) for _ in range(25)]
    assert extra_samples(quiet, [], per_sample_ms=1.2) == 0
    more = extra_samples(noisy, [], per_sample_ms=12.0)
    assert more == int(EXTRA_SAMPLES_BUDGET_MS / 12.0)  # as many as the budget allows
    assert more < 450  # ~450 would be needed
    assert extra_samples(noisy, [], per_sample_ms=0.2) > 300  # cheap calls: all it needs


def test_placement_differences_between_input_sets_do_not_ask_for_samples():
    rng = random.Random(4)
    times, labels = [], []
    for i in range(120):  # three sets 4 % apart, each steady
        times.append((1.0, 1.04, 0.98)[i % 3] + rng.gauss(0, 0.0005))
        labels.append(i % 3)
    assert extra_samples(times, labels, per_sample_ms=1.0) == 0
    assert extra_samples(times, [], per_sample_ms=1.0) > 0  # pooled, they would


def test_timed_input_sets_fill_a_share_of_the_gpu_and_shrink_to_what_fits():
    gib = 2**30
    assert timing_set_count(12, 512 * 2**20, 141 * gib) == 12  # cross-entropy on an H200
    assert timing_set_count(12, 512 * 2**20, 24 * gib) == 3  # ... on a 24 GB card
    assert timing_set_count(12, 256 * 2**20, 24 * gib) == 7
    assert timing_set_count(12, 2 * gib, 24 * gib) == 3  # three fit in a quarter
    assert timing_set_count(12, 8 * gib, 24 * gib) == 1  # three would not: one
    # KernelBench's element-wise shapes (4096 x 393216 fp32, in and out) on an H200
    assert timing_set_count(12, 2 * 4096 * 393216 * 4, 140 * gib) == 2
    assert timing_set_count(2, 1, 24 * gib) == 2  # never more than asked
    assert timing_set_count(12, 100 * gib, 24 * gib) == 1  # never fewer than one
