"""How many samples a timed call gets (the GPU timer's plan; the timer itself runs in GPU
tests), and the robust spread."""

from __future__ import annotations

from evotui.eval.timing import COARSE_SAMPLES, robust_spread_pct, sample_plan


def test_short_calls_get_300_ms_of_samples_after_a_25_ms_warm_up():
    plan = sample_plan(0.134, 0.03)  # the softmax seed on an H200
    assert plan.method == "events" and plan.warmup_ms == 25.0
    assert plan.samples == int(300 / (0.134 + 0.03 + 0.2)) and plan.synced_calls == 10


def test_long_calls_get_at_least_20_samples_and_a_longer_warm_up():
    plan = sample_plan(40.0, 0.03)
    assert (plan.method, plan.samples, plan.warmup_ms) == ("events", 20, 500.0)
    assert sample_plan(2.4, 0.03).warmup_ms == 96.0  # 40 calls' worth


def test_a_clear_loser_gets_a_few_samples_and_no_warm_up():
    slow = sample_plan(100.0, 0.03, slow_cutoff_ms=5.0)
    assert (slow.method, slow.samples, slow.warmup_ms, slow.synced_calls) == (
        "coarse", COARSE_SAMPLES, 0.0, 3)
    # at or under the cutoff, and without one, the full plan
    assert sample_plan(5.0, 0.03, slow_cutoff_ms=5.0).method == "events"
    assert sample_plan(100.0, 0.03).method == "events"


def test_robust_spread_ignores_a_single_outlier():
    steady = [1.0, 1.01, 0.99, 1.0, 1.02, 0.98, 1.0, 1.0]
    assert robust_spread_pct(steady) < 2.0
    assert robust_spread_pct(steady + [50.0]) < 2.5
    assert robust_spread_pct([1.0, 2.0]) == 0.0  # too few to say
