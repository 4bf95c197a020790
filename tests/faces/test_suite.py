"""``evotui suite``: tiny CPU tasks through the real pool, a problem that cannot start, known
GPU figures through a stand-in evaluator, Ctrl-C and a second invocation that resumes, and
the user's mistakes."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from evotui.cli.main import main
from evotui.engine.rundir import load_checkpoint
from evotui.eval.results import EvalRequest, EvalResult
from evotui.suite.record import SuiteSettings, locked
from evotui.suite.runner import SuiteRunner, open_suite, save
from evotui.suite.spec import Budget, discover
from tests.conftest import CANDIDATES, ROOT, SAMPLES
from tests.engine_helpers import FakeEvaluator

pytestmark = pytest.mark.timeout(240)

BROKEN_TASK = "import not_a_module_xyz  # like a KernelBench file whose dependency is missing\n"
# KernelBench's layout and naming, no seed next to it: the run derives one
SEEDLESS_TASK = """import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(x)


N = 16
D = 1024


def get_inputs():
    return [torch.randn(N, D)]


def get_init_inputs():
    return []
"""


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("EVOTUI_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


@pytest.fixture
def broken(tmp_path) -> Path:
    path = tmp_path / "tasks" / "0_broken.py"
    path.parent.mkdir()
    path.write_text(BROKEN_TASK)
    return path


def run_suite(out: Path, paths: list[str], evaluator, budget: int = 1) -> tuple[bool, dict, str]:
    run = open_suite(out, discover(paths), SuiteSettings(Budget(budget), device="cpu"))
    steps = []
    complete = asyncio.run(SuiteRunner(run, evaluator, steps.append).run_all())
    assert [s.kind for s in steps if s.kind in ("start", "end")].count("end") == len(run.results)
    return complete, json.loads((out / "suite.json").read_text()), (out / "suite.md").read_text()


def test_cpu_suite_runs_each_problem_as_a_run_directory(cpu_pool, home, tmp_path, broken):
    (broken.parent / "19_ReLU.py").write_text(SEEDLESS_TASK)
    out = tmp_path / "suite"
    complete, data, md = run_suite(out, [str(broken.parent), str(SAMPLES / "add_gelu"),
                                         str(SAMPLES / "row_sum")], cpu_pool)
    assert complete
    by = {p["name"]: p for p in data["problems"]}
    assert list(by) == ["0_broken", "19_ReLU", "add_gelu", "row_sum"]
    relu = by.pop("19_ReLU")
    assert relu["status"] == "accepted" and relu["seed_source"] == "derived"
    assert relu["seed_detail"].startswith("derived from the reference")
    # the problem that cannot start comes first and does not stop the others
    assert by["0_broken"]["status"] == "could_not_start"
    assert "No module named 'not_a_module_xyz'" in by["0_broken"]["reason"]
    for name in ("add_gelu", "row_sum"):
        p = by[name]
        assert p["status"] == "accepted" and p["evaluations"] == 1, p
        assert p["seed_source"] == "seed.py" and p["interpreter"] and p["time_ms"] > 0
        assert p["speedup_eager"] is None and p["speedup_compile"] is None
        run_dir = out / p["run_dir"]
        report = json.loads((run_dir / "report.json").read_text())
        assert report["task"] == name and report["evaluated"] == 1
        assert (run_dir / "best.py").is_file()
        assert load_checkpoint(run_dir)["task"].endswith(f"{name}/task.py")  # --resume opens it
    s = data["summary"]
    assert s["problems"] == 4 and s["accepted"] == 3 and s["evaluations"] == 3
    assert s["could_not_start"] == [{"name": "0_broken", "reason": by["0_broken"]["reason"]}]
    assert s["fast_p"] == {"eager": None, "compile": None} and "CPU interpreter" in s["na"]["eager"]
    assert "| add_gelu | accepted | seed.py | n/a | n/a |" in md
    assert "| 0_broken | could not start: " in md and "## Could not start" in md
    assert "| — | 0 | — |" in md and not (out / "0_broken").exists()  # it left no run
    assert "| eager PyTorch | n/a | n/a | n/a | n/a | n/a | n/a | n/a |" in md
    assert "Against torch.compile: n/a (CPU interpreter" in md


class FiguresEvaluator(FakeEvaluator):
    """A GPU-looking evaluator that gives each task fixed figures."""

    FIGURES = {
        "add_gelu": EvalResult(True, "accepted", "ok", device="cuda:0", time_ms=0.1,
                               spread_pct=0.5, speedup_eager=2.5, speedup_compile=1.2,
                               roofline_pct=61.0),
        # torch.compile failed on the judge: no compile time, so no speedup against it
        "row_sum": EvalResult(True, "accepted", "ok", device="cuda:0", time_ms=0.2,
                              spread_pct=0.5, speedup_eager=0.9, roofline_pct=40.0),
        "16_Conv2d_ReLU_BiasAdd": EvalResult(True, "accepted", "ok", device="cuda:0", time_ms=0.3,
                                             spread_pct=0.5, speedup_eager=1.1,
                                             speedup_compile=0.9, roofline_pct=7.0),
        "softmax": EvalResult.rejected("mismatch", "max abs error 3.1 at [0, 7]",
                                       device="cuda:0"),
    }

    async def aevaluate(self, request: EvalRequest) -> EvalResult:
        self.requests.append(request)
        return self.FIGURES[request.task.name]


def test_gpu_figures_give_fast_p_and_geomean_per_baseline(home, tmp_path, broken):
    out = tmp_path / "suite"
    complete, data, md = run_suite(out, [str(SAMPLES / n) for n in ("add_gelu", "row_sum",
                                                                     "softmax")]
                                   + [str(broken)], FiguresEvaluator())
    assert complete
    by = {p["name"]: p for p in data["problems"]}
    assert by["add_gelu"]["speedup_eager"] == 2.5 and by["add_gelu"]["roofline_pct"] == 61.0
    assert by["add_gelu"]["eager_ms"] == pytest.approx(0.25)  # the reference, as timed
    assert by["softmax"]["status"] == "no_accepted_kernel"
    assert "seed candidate was rejected (mismatch)" in by["softmax"]["reason"]
    s = data["summary"]
    # 4 problems; correct: add_gelu 2.5× / 1.2×, row_sum 0.9× / unmeasured
    assert s["fast_p"]["eager"] == {"fast_0": 0.5, "fast_0.5": 0.5, "fast_0.8": 0.5,
                                    "fast_1": 0.25, "fast_1.5": 0.25, "fast_2": 0.25}
    assert s["fast_p"]["compile"] == {"fast_0": 0.25, "fast_0.5": 0.25, "fast_0.8": 0.25,
                                      "fast_1": 0.25, "fast_1.5": 0.0, "fast_2": 0.0}
    assert s["geomean_speedup"]["eager"] == pytest.approx((2.5 * 0.9) ** 0.5)
    assert s["geomean_speedup"]["compile"] == pytest.approx(1.2)
    assert "| eager PyTorch | 50% | 50% | 50% | 25% | 25% | 25% | 1.50× |" in md
    assert "| torch.compile | 25% | 25% | 25% | 25% | 0% | 0% | 1.20× |" in md
    assert "| add_gelu | accepted | seed.py | 2.50× | 1.20× | 61 % | 1 |" in md
    assert "| row_sum | accepted | seed.py | 0.90× | n/a | 40 % | 1 |" in md
    assert ("Against torch.compile, without a measured speedup (counted as not faster): "
            "row_sum (torch.compile could not be timed for this reference on the judge).") in md


def test_allow_torch_reaches_each_run_and_marks_only_problems_that_call_the_op(home, tmp_path):
    out = tmp_path / "suite"
    conv = ROOT / "tests" / "kernelbench_style" / "16_Conv2d_ReLU_BiasAdd.py"
    run = open_suite(out, discover([str(SAMPLES / "add_gelu"), str(conv)]),
                     SuiteSettings(Budget(1), device="cpu", allow_torch=("aten::convolution",),
                                   memory_k=0))
    assert asyncio.run(SuiteRunner(run, FiguresEvaluator()).run_all())
    data = json.loads((out / "suite.json").read_text())
    plain, conv_problem = data["problems"]
    assert plain["allow_torch"] == [] and not plain["allow_torch_option"]  # no convolution in it
    assert conv_problem["allow_torch"] == ["aten::convolution"] and conv_problem["allow_torch_option"]
    assert data["summary"]["allow_torch"] == [{"name": "16_Conv2d_ReLU_BiasAdd",
                                               "ops": ["aten::convolution"], "from_option": True}]
    for name in ("add_gelu", "16_Conv2d_ReLU_BiasAdd"):  # the option reaches every run
        checkpoint = load_checkpoint(out / name)
        assert checkpoint["run"]["allow_torch"] == ["aten::convolution"]
        assert checkpoint["config"]["memory_k"] == 0  # the other options reach the run too
    md = (out / "suite.md").read_text()
    assert "| add_gelu | accepted |" in md
    assert "| 16_Conv2d_ReLU_BiasAdd (allow-torch: aten::convolution) |" in md
    assert "- 16_Conv2d_ReLU_BiasAdd: aten::convolution (--allow-torch)" in md


# ---- Ctrl-C, then the same command again ------------------------------------------------

def _evotui(*args: str, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "evotui", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)


def _run_started(run_dir: Path) -> list[dict]:
    events = [json.loads(x) for x in (run_dir / "events.jsonl").read_text().splitlines()]
    return [e for e in events if e["kind"] == "run_started"]


def test_interrupted_suite_resumes_without_rerunning_finished_problems(tmp_path):
    env = {**os.environ, "EVOTUI_HOME": str(tmp_path / "home"), "PYTHONPATH": str(ROOT)}
    env.pop("OLLAMA_HOST", None)
    listing = tmp_path / "problems.txt"
    # softmax with a seed of 6 settings: its search ends after 5 children; add_gelu has more
    listing.write_text(f"{SAMPLES / 'softmax'} {CANDIDATES / 'softmax' / 'honest_num_warps_only.py'}\n"
                       f"{SAMPLES / 'add_gelu'}\n")
    out = tmp_path / "suite"
    command = ["suite", str(listing), "--budget", "8", "--device", "cpu", "--out", str(out)]
    first = _evotui(*command, env=env)
    deadline = time.monotonic() + 150
    while not (out / "add_gelu" / "checkpoint.json").exists():  # softmax done, add_gelu going
        assert first.poll() is None and time.monotonic() < deadline, first.communicate()
        time.sleep(0.1)
    first.send_signal(signal.SIGINT)
    stdout, stderr = first.communicate(timeout=60)
    assert first.returncode == 130, stdout + stderr
    assert f"evotui suite --resume {out}" in stderr
    data = json.loads((out / "suite.json").read_text())
    softmax, gelu = data["problems"]
    assert softmax["status"] == "accepted" and softmax["evaluations"] == 5
    assert softmax["outcome"] == "exhausted" and softmax["seed_source"] == "--seed"
    assert gelu["status"] == "running" and gelu["evaluations"] < 8 and not gelu["finished"]
    assert "add_gelu: interrupted after" in stderr
    kept = (out / "softmax" / "report.json").read_text()
    done_before = gelu["evaluations"]

    second = _evotui(*command, env=env)
    stdout, stderr = second.communicate(timeout=170)
    assert second.returncode == 0, stdout + stderr
    data = json.loads((out / "suite.json").read_text())
    softmax2, gelu2 = data["problems"]
    assert softmax2 == softmax  # kept as it was, not run again
    assert (out / "softmax" / "report.json").read_text() == kept
    assert len(_run_started(out / "softmax")) == 1
    starts = _run_started(out / "add_gelu")
    assert len(starts) == 2 and starts[1]["resumed"] and starts[1]["evaluated"] == done_before
    assert gelu2["status"] == "accepted" and gelu2["evaluations"] == 8 and gelu2["attempts"] == 2
    assert data["summary"]["accepted"] == 2 and data["summary"]["not_finished"] == []
    assert "suite of 2 problems (1 done)" in stderr
    assert f"suite: {out / 'suite.md'}" in stdout


def test_a_killed_suite_resumes_its_running_problem(tmp_path):
    env = {**os.environ, "EVOTUI_HOME": str(tmp_path / "home"), "PYTHONPATH": str(ROOT)}
    env.pop("OLLAMA_HOST", None)
    out = tmp_path / "suite"
    command = ["suite", str(SAMPLES / "add_gelu"), "--budget", "4", "--device", "cpu",
               "--out", str(out)]
    first = _evotui(*command, env=env)
    deadline = time.monotonic() + 150
    while not (out / "add_gelu" / "checkpoint.json").exists():  # the seed is judged
        assert first.poll() is None and time.monotonic() < deadline, first.communicate()
        time.sleep(0.05)
    first.kill()  # no handler runs: only what is already on disk survives
    first.communicate(timeout=30)
    (p,) = json.loads((out / "suite.json").read_text())["problems"]
    assert p["status"] == "running" and p["attempts"] == 1
    second = _evotui(*command, env=env)
    stdout, stderr = second.communicate(timeout=170)
    assert second.returncode == 0, stdout + stderr
    (p,) = json.loads((out / "suite.json").read_text())["problems"]
    assert p["status"] == "accepted" and p["evaluations"] == 4 and p["attempts"] == 2
    assert [e["resumed"] for e in _run_started(out / "add_gelu")] == [False, True]


# ---- the user's mistakes ------------------------------------------------------------------

def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["suite", *args])
    return result.exit_code, result.output


def test_mistakes_get_one_line(home, tmp_path):
    code, text = _cli(str(tmp_path / "nope"), "--out", str(tmp_path / "s"))
    assert code == 2 and text.strip() == f"error: not found: {tmp_path / 'nope'} (give task " \
                                          "files, folders or a list file)"
    code, text = _cli(str(SAMPLES / "softmax"), "--time-budget", "ten minutes")
    assert code == 2 and "is not a duration" in text and "Traceback" not in text
    code, text = _cli("--resume", str(tmp_path))
    assert code == 2 and text.strip() == f"error: nothing to resume in {tmp_path}: no suite.json"
    code, text = _cli()
    assert code == 2 and "give PROBLEMS" in text
    code, text = _cli("--resume", str(tmp_path), "--budget", "3", "--shape", "N=4")
    assert code == 2 and text.startswith("error: --budget, --shape cannot be combined with "
                                         "--resume")
    listing = tmp_path / "list.txt"
    listing.write_text("softmax\n")
    code, text = _cli(str(listing))
    assert code == 2 and text.strip().startswith(f"error: {listing}:1: task not found")
    # a folder that holds a suite of other problems is not silently mixed with new ones
    run = open_suite(tmp_path / "s", discover([str(SAMPLES / "softmax")]),
                     SuiteSettings(Budget(1), device="cpu"))
    save(run)
    code, text = _cli(str(SAMPLES / "row_sum"), "--out", str(tmp_path / "s"))
    assert code == 2 and "holds a suite of other problems" in text and len(text.splitlines()) == 1
    with locked(tmp_path / "s"):  # another process runs this suite
        code, text = _cli("--resume", str(tmp_path / "s"))
    assert code == 2 and text.strip() == f"error: {tmp_path / 's'} is in use by another evotui suite"


def test_help_explains():
    code, text = _cli("--help")
    assert code == 0
    for words in ("fast_p", "--budget", "--time-budget", "--scheduler", "--resume",
                  "natural order", "ALL problems", "suite.json"):
        assert words in text, words


# ---- time budgets, problems at once, a Dask cluster -----------------------------------------

class _SlowSeedEvaluator(FakeEvaluator):
    """The first judgement (the seed's, which also times eager and torch.compile) takes
    longer than the whole time budget; the others are quick."""

    async def aevaluate(self, request):
        if not self.requests:
            await asyncio.sleep(2.0)
        return await super().aevaluate(request)


def test_the_time_budget_starts_once_the_seed_has_its_verdict(home, tmp_path):
    run = open_suite(tmp_path / "suite", discover([str(SAMPLES / "add_gelu")]),
                     SuiteSettings(Budget(None, 1.0), device="cpu"))
    assert asyncio.run(SuiteRunner(run, _SlowSeedEvaluator(delay=0.05)).run_all())
    (p,) = json.loads((tmp_path / "suite" / "suite.json").read_text())["problems"]
    assert p["status"] == "accepted" and p["time_budget_reached"], p
    assert p["evaluations"] >= 3  # children got their second after the seed's two


def test_a_time_budget_stops_each_problem_and_says_so(home, tmp_path):
    run = open_suite(tmp_path / "suite", discover([str(SAMPLES / "add_gelu")]),
                     SuiteSettings(Budget(None, 3.0), device="cpu"))
    slow = FakeEvaluator(delay=0.2)  # about five evaluations a second, without end
    t0 = time.monotonic()
    assert asyncio.run(SuiteRunner(run, slow).run_all())
    assert time.monotonic() - t0 < 20
    data = json.loads((tmp_path / "suite" / "suite.json").read_text())
    (p,) = data["problems"]
    assert p["status"] == "accepted" and p["time_budget_reached"] and p["finished"]
    assert p["evaluations"] < 60 and p["outcome"] == "stopped"
    assert data["settings"]["budget"] == {"evaluations": None, "seconds": 3.0}
    md = (tmp_path / "suite" / "suite.md").read_text()
    assert "3s per problem" in md and "(time budget reached)" in md
    # --resume of a finished suite starts no evaluator: it says so and gives the summary
    code, text = _cli("--resume", str(tmp_path / "suite"), "--json")
    assert code == 0 and "every problem of" in text and "accepted 1 of 1" in text
    last = json.loads(text.strip().splitlines()[-1])
    assert last["accepted"] == 1 and last["suite"] == str(tmp_path / "suite" / "suite.json")
    # the run continued on its own (`evotui run --resume DIR/add_gelu --iterations N`): the
    # suite reads its figures again, without running anything
    report_file = tmp_path / "suite" / "add_gelu" / "report.json"
    report = json.loads(report_file.read_text())
    report.update(evaluated=p["evaluations"] + 10, finished="2099-01-01T00:00:00+0000")
    report["best"]["speedup_eager"] = 3.0
    report_file.write_text(json.dumps(report))
    code, text = _cli("--resume", str(tmp_path / "suite"), "--json")
    assert code == 0 and json.loads(text.strip().splitlines()[-1])["evaluations"] == \
        p["evaluations"] + 10
    (q,) = json.loads((tmp_path / "suite" / "suite.json").read_text())["problems"]
    assert q["speedup_eager"] == 3.0 and q["report_finished"] == "2099-01-01T00:00:00+0000"


def test_problems_run_at_once_on_a_dask_cluster(home, tmp_path):
    distributed = pytest.importorskip("distributed", reason='needs "evotui[dask]"')
    from evotui.suite.runner import open_evaluator

    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  resources={"GPU": 1}, dashboard_address=":0") as cluster:
        # no jobs given: one problem per GPU worker
        settings = SuiteSettings(Budget(1), device="cpu", scheduler=cluster.scheduler_address)
        run = open_suite(tmp_path / "suite", discover([str(SAMPLES / "add_gelu"),
                                                       str(SAMPLES / "row_sum")]), settings)
        pool, warning = open_evaluator(settings)
        steps = []
        try:
            assert asyncio.run(SuiteRunner(run, pool, steps.append).run_all())
        finally:
            pool.close()
    order = [(s.kind, s.result.name) for s in steps if s.kind in ("start", "end")]
    assert order[:2] == [("start", "add_gelu"), ("start", "row_sum")]  # one job per problem
    data = json.loads((tmp_path / "suite" / "suite.json").read_text())
    assert [p["status"] for p in data["problems"]] == ["accepted", "accepted"]
    for p in data["problems"]:
        assert set(p["device"].split(", ")) == set(pool.devices) and len(pool.devices) == 2
        assert (tmp_path / "suite" / p["run_dir"] / "report.json").is_file()


def test_the_default_folder_is_the_same_for_the_same_problems(home):
    from evotui.cli.suite import _default_out

    args = (SAMPLES / "softmax",)
    one = _default_out(args, discover([str(a) for a in args]))
    assert one == _default_out(args, discover([str(a) for a in args]))
    assert one.parent == home / "suites" and one.name.startswith("softmax-")
    other = (SAMPLES / "row_sum",)
    assert _default_out(other, discover([str(a) for a in other])) != one
