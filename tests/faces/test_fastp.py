"""fast_p and the geometric mean on figures worked out by hand, as KernelBench defines them
(``src/score.py``: correct AND speedup strictly above p, over ALL problems); the summary that
``suite.json`` carries; the suite's problem discovery and budgets."""

from __future__ import annotations

import math

import pytest

from evotui.suite import fastp, report
from evotui.suite.fastp import Outcome
from evotui.suite.record import ACCEPTED, NO_KERNEL, NOT_STARTED, ProblemResult
from evotui.suite.spec import SpecError, discover, natural_key, parse_duration

# five problems: three correct (2.0×, 0.9×, exactly 1.0×), one fast but wrong, one that
# never started
FIVE = [Outcome(True, 2.0), Outcome(True, 0.9), Outcome(True, 1.0), Outcome(False, 3.0),
        Outcome(False, None)]


def test_fast_p_counts_correct_and_strictly_faster_over_all_problems():
    table = fastp.fast_p_table(FIVE)
    # by hand: p=0 → 3/5; 0.5 → 3/5; 0.8 → 3/5 (0.9 > 0.8); 1 → 1/5 (1.0 is not > 1);
    # 1.5 → 1/5; 2 → 0 (2.0 is not > 2); the wrong 3.0× never counts
    assert table == {"fast_0": 0.6, "fast_0.5": 0.6, "fast_0.8": 0.6, "fast_1": 0.2,
                     "fast_1.5": 0.2, "fast_2": 0.0}


def test_fast_p_matches_a_direct_reading_of_kernelbench_formula():
    np = pytest.importorskip("numpy")
    correct = np.array([o.correct for o in FIVE])
    baseline = np.array([2.0, 0.9, 1.0, 3.0, 1.0])  # baseline ms; kernel ms = 1 ms each
    kernel = np.ones(5)
    for p in fastp.THRESHOLDS:
        speedups = baseline[correct] / kernel[correct]
        expected = float(np.sum(speedups > p)) / len(FIVE)
        assert fastp.fast_p(FIVE, p) == pytest.approx(expected), p


def test_geomean_is_over_the_correct_problems_only():
    # (2.0 × 0.9 × 1.0) ** (1/3); the wrong 3.0× and the unstarted problem are left out
    assert fastp.geomean_speedup(FIVE) == pytest.approx(1.8 ** (1 / 3))
    assert fastp.geomean_speedup(FIVE) == pytest.approx(1.21644, abs=1e-5)
    assert fastp.geometric_mean([4.0, 1.0]) == pytest.approx(2.0)
    assert fastp.geomean_speedup([Outcome(False, 2.0)]) is None


def test_empty_and_unmeasured():
    assert fastp.fast_p([], 1.0) == 0.0
    assert fastp.geomean_speedup([]) is None
    # a correct kernel with no speedup figure counts as not faster, and is counted
    outcomes = [Outcome(True, None), Outcome(True, 1.5)]
    assert fastp.fast_p(outcomes, 0) == 0.5 and fastp.unmeasured(outcomes) == 1
    assert fastp.geomean_speedup(outcomes) == pytest.approx(1.5)


def _r(name: str, status: str, eager: float | None = None, compile_: float | None = None,
       interpreter: bool = False) -> ProblemResult:
    return ProblemResult(name, f"/t/{name}.py", status=status, speedup_eager=eager,
                         speedup_compile=compile_, interpreter=interpreter,
                         reason="boom" if status == NOT_STARTED else "")


def test_summary_per_baseline_with_a_missing_torch_compile_time():
    results = [_r("a", ACCEPTED, 2.5, 1.2), _r("b", ACCEPTED, 0.9, None), _r("c", NO_KERNEL),
               _r("d", NOT_STARTED)]
    s = report.summary(results)
    assert s["problems"] == 4 and s["accepted"] == 2
    assert s["could_not_start"] == [{"name": "d", "reason": "boom"}]
    assert s["fast_p"]["eager"] == {"fast_0": 0.5, "fast_0.5": 0.5, "fast_0.8": 0.5,
                                    "fast_1": 0.25, "fast_1.5": 0.25, "fast_2": 0.25}
    assert s["geomean_speedup"]["eager"] == pytest.approx(math.sqrt(2.5 * 0.9))
    assert s["fast_p"]["compile"] == {"fast_0": 0.25, "fast_0.5": 0.25, "fast_0.8": 0.25,
                                      "fast_1": 0.25, "fast_1.5": 0.0, "fast_2": 0.0}
    assert s["geomean_speedup"]["compile"] == pytest.approx(1.2)
    assert s["unmeasured"] == {"eager": 0, "compile": 1}
    assert report.speedup_na(results[1], "compile").startswith("torch.compile could not be timed")


def test_summary_on_the_interpreter_is_not_applicable_and_says_why():
    s = report.summary([_r("a", ACCEPTED, interpreter=True), _r("b", NOT_STARTED)])
    assert s["fast_p"] == {"eager": None, "compile": None}
    assert "CPU interpreter" in s["na"]["eager"] and "CPU interpreter" in s["na"]["compile"]


def test_durations():
    assert parse_duration("90") == 90 and parse_duration("90s") == 90
    assert parse_duration("10m") == 600 and parse_duration("1.5h") == 5400
    assert parse_duration("1h30m") == 5400 and parse_duration("2m 30s") == 150
    for bad in ("", "10x", "m", "0", "1h-2m"):
        with pytest.raises(SpecError, match="not a duration"):
            parse_duration(bad)


def test_a_folder_gives_its_tasks_in_natural_order(tmp_path):
    for name in ("10_b.py", "2_a.py", "1_c.py", "seed.py", "_helper.py", "notes.txt"):
        (tmp_path / name).write_text("")
    (tmp_path / "3_sub").mkdir()
    (tmp_path / "3_sub" / "task.py").write_text("")
    (tmp_path / "empty").mkdir()
    assert [p.name for p in discover([str(tmp_path)])] == ["1_c", "2_a", "3_sub", "10_b"]
    assert sorted(["10_x", "2_x", "1_x"], key=natural_key) == ["1_x", "2_x", "10_x"]
    # a folder holding task.py is one problem, as for `evotui run`
    assert [p.name for p in discover([str(tmp_path / "3_sub")])] == ["3_sub"]
    with pytest.raises(SpecError, match="no task files"):
        discover([str(tmp_path / "empty")])
    with pytest.raises(SpecError, match="not found"):
        discover([str(tmp_path / "nope")])


def test_a_list_file_names_tasks_and_seeds(tmp_path, monkeypatch):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "task.py").write_text("")
    (tmp_path / "b.py").write_text("")
    (tmp_path / "my_seed.py").write_text("")
    listing = tmp_path / "problems.txt"
    listing.write_text("# the sample\na\n\nb.py my_seed.py  # with its own seed\na\n")
    problems = discover([str(listing)])
    assert [(p.name, p.seed) for p in problems] == [
        ("a", None), ("b", str((tmp_path / "my_seed.py").resolve()))]  # the repeat is dropped
    # written from the current folder (`ls level1/*.py > /tmp/list`): found there too
    elsewhere = tmp_path / "lists"
    elsewhere.mkdir()
    monkeypatch.chdir(tmp_path)
    (elsewhere / "l.txt").write_text("b.py\n")
    assert [p.task for p in discover([str(elsewhere / "l.txt")])] == [str(tmp_path / "b.py")]
    listing.write_text("a\nmissing.py\n")
    with pytest.raises(SpecError, match=r"problems.txt:2: task not found"):
        discover([str(listing)])


def test_same_names_from_two_folders_get_distinct_run_directories(tmp_path):
    for level in ("level1", "level2"):
        (tmp_path / level).mkdir()
        (tmp_path / level / "1_X.py").write_text("")
    names = [p.name for p in discover([str(tmp_path / "level1"), str(tmp_path / "level2")])]
    assert names == ["1_X", "1_X-2"]
