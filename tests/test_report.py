"""The one-line summary of a run's best candidate (report.md, the headless end line)."""

from __future__ import annotations

from evotui.engine.report import best_summary


def _report(**best):
    return {"interpreter": False, "best": {"id": "c0042", "time_ms": 0.0388, **best}}


def test_gpu_summary_names_every_figure_measured():
    line = best_summary(_report(speedup_eager=11.79, speedup_compile=1.08, roofline_pct=81.2,
                                copy_pct=93.4))
    assert line == ("c0042: 38.80 µs, 11.79× eager, 1.08× torch.compile, 81 % of roofline, "
                    "93 % of a same-size copy")


def test_figures_not_measured_are_left_out():
    assert best_summary(_report(speedup_eager=0.7)) == "c0042: 38.80 µs, 0.70× eager"


def test_interpreter_times_are_never_a_speed():
    report = {"interpreter": True, "best": {"id": "c0001", "time_ms": 26.4}}
    assert best_summary(report) == ("c0001: 26.4 ms of interpreter wall time "
                                    "(CPU interpreter: not a kernel speed)")
    assert best_summary({"interpreter": False, "best": None}) == "no accepted candidate"
