"""``evotui ab``: learn on a related task, then the same budget with memory off and on; the
user's library untouched unless asked; the figures; the command on the CPU interpreter."""

from __future__ import annotations

import asyncio
import json
import math
import re

import pytest
from click.testing import CliRunner

from evotui.ab import report as ab_report
from evotui.ab import run as ab
from evotui.ab.report import RunRecord
from evotui.cli import ab as cli_ab
from evotui.cli.main import main
from evotui.engine.tunables import find_tunables
from evotui.eval.evaluator import Evaluator
from evotui.eval.results import EvalResult
from evotui.memory import AdviceStore
from tests.conftest import SAMPLES
from tests.engine_helpers import FakeEvaluator

pytestmark = pytest.mark.timeout(120)
_INT = re.compile(r"^(NUM_WARPS|BLOCK_SIZE)\s*=\s*(\d+)", re.MULTILINE)


def rmsnorm_cost(source: str) -> EvalResult:
    """A made-up landscape over the rmsnorm seed's tunables: best at BLOCK_SIZE 4096 and
    NUM_WARPS 8 (the seed has 1024 and 4: 2.3 ms)."""
    v = {k: int(x) for k, x in _INT.findall(source)}
    t = 1 + 0.5 * abs(math.log2(v["BLOCK_SIZE"]) - 12) + 0.3 * abs(math.log2(v["NUM_WARPS"]) - 3)
    return EvalResult(True, "accepted", "ok", time_ms=t, spread_pct=0.2)


def narrowed(name: str, root) -> str:
    """A copy of sample ``name`` whose seed moves only BLOCK_SIZE and NUM_WARPS (every other
    declared knob frozen at its default): the landscape ``rmsnorm_cost`` models."""
    src = SAMPLES / name
    dst = root / "samples" / name
    dst.mkdir(parents=True)
    (dst / "task.py").write_text((src / "task.py").read_text())
    seed = (src / "seed.py").read_text()
    for t in find_tunables(seed):
        if t.name not in ("BLOCK_SIZE", "NUM_WARPS"):
            seed, n = re.subn(rf'"{t.name}": \[[^\]]*\]', f'"{t.name}": [{t.value}]', seed)
            assert n == 1, t.name
    assert {t.name for t in find_tunables(seed) if len(t.choices) > 1} == {"BLOCK_SIZE",
                                                                         "NUM_WARPS"}
    (dst / "seed.py").write_text(seed)
    return str(dst)


@pytest.fixture
def user_home(tmp_path, monkeypatch):
    home = tmp_path / "user-home"
    monkeypatch.setenv("EVOTUI_HOME", str(home))
    store = AdviceStore(home / "advice.json")
    mine = store.new("Keep the weight vector in registers across row chunks.", kind="rmsnorm",
                     tags=["rmsnorm"])
    store.close()
    return home, mine.id


def test_learning_on_fp16_makes_bf16_reach_the_target_sooner(tmp_path, user_home):
    home, mine = user_home
    before = (home / "advice.json").read_bytes()
    spec = ab.ABSpec(task=narrowed("rmsnorm", tmp_path),
                     learn=narrowed("rmsnorm_fp16", tmp_path), out=tmp_path / "ab", seeds=3, iterations=8, target_speedup=1.75,
                     concurrency=1)
    lines: list[str] = []
    data = asyncio.run(ab.ABRunner(spec, FakeEvaluator(rmsnorm_cost), lines.append).run())
    ab.write_results(spec.out, data)
    assert (home / "advice.json").read_bytes() == before  # the user's library: untouched

    learn = data["learn"]
    assert learn["task"] == "rmsnorm_fp16" and learn["advice"]["proposed"] >= 1
    private = AdviceStore(tmp_path / "ab" / "home" / "advice.json")
    assert mine in private  # a copy of the user's library, plus what the learning run taught
    learned = [a for a in private.all() if a.source == "distilled"]
    assert learned and all(a.provenance[0].task == "rmsnorm_fp16" for a in learned)
    assert all(a.provenance[0].dtype == "fp16" and a.conditions["template"]["changes"]
               for a in learned)

    runs = data["runs"]
    assert [(r["arm"], r["seed"]) for r in runs] == [
        ("learn", 0), ("off", 1), ("on", 1), ("off", 2), ("on", 2), ("off", 3), ("on", 3)]
    assert all(r["evaluated"] == 8 and len(r["curve"]) == 9 for r in runs)
    off, on = data["summary"]["off"], data["summary"]["on"]
    assert off["children_with_advice"] == 0 and on["children_with_advice"] > 0
    assert on["improved_with_advice"] > 0
    # the memory pays on this landscape: advice from fp16 steers bf16 straight downhill
    assert on["reached"] > off["reached"]
    assert on["median_evals_to_target"] is not None and off["median_evals_to_target"] is None
    assert data["verdict"] == "memory on reached the target in most runs; memory off did not"
    # each "on" run had its own copy of the library: the learned copy kept no counters
    assert sum(a.shown for a in private.all()) == 0
    for seed in (1, 2, 3):
        copy = AdviceStore(tmp_path / "ab" / "libraries" / f"on-seed{seed}.json")
        assert sum(a.shown for a in copy.all()) > 0

    saved = json.loads((spec.out / "ab.json").read_text())
    assert saved["target"] == {"kind": "speedup", "speedup_vs_seed": 1.75}
    md = (spec.out / "ab.md").read_text()
    assert "| evaluations to target, median | >8 |" in md and "memory on" in md
    assert "learned first on `rmsnorm_fp16`" in md and "CPU interpreter" not in md
    assert any(line.startswith("learned on rmsnorm_fp16") for line in lines)


def test_save_advice_imports_only_what_the_learning_run_taught(tmp_path, user_home):
    home, mine = user_home
    n_before = len(AdviceStore(home / "advice.json"))
    spec = ab.ABSpec(task=str(SAMPLES / "rmsnorm"), learn=str(SAMPLES / "rmsnorm_wide"),
                     out=tmp_path / "ab", seeds=1, iterations=6, concurrency=1,
                     save_advice=True)
    data = asyncio.run(ab.ABRunner(spec, FakeEvaluator(rmsnorm_cost)).run())
    user = AdviceStore(home / "advice.json")
    learned = [a for a in user.all() if a.source == "distilled"]
    assert len(user) == n_before + len(learned) and data["library"]["saved"] == len(learned)
    assert learned and all(a.provenance[0].task == "rmsnorm_wide" for a in learned)
    assert all(a.provenance[0].shape == "2048x16384" for a in learned)


def rec(arm: str, curve: list[float | None], seed: int = 1) -> RunRecord:
    best = min((t for t in curve if t is not None), default=None)
    return RunRecord(arm=arm, seed=seed, task="t", run_dir="r", outcome="completed",
                     evaluated=len(curve) - 1, iterations=len(curve) - 1,
                     seed_time_ms=curve[0], best_time_ms=best, best_speedup_eager=None,
                     curve=curve)


def test_targets_and_summary():
    runs = [rec("learn", [9.0, 1.0]),  # never part of the comparison
            rec("off", [4.0, 4.0, 3.0, 2.0, 2.0]), rec("on", [4.0, 2.0, 2.0, 2.0, 2.0]),
            rec("off", [4.0, 4.0, 4.0, 4.0, 4.0], 2), rec("on", [4.0, 3.0, 2.0, 2.0, 2.0], 2)]
    target = ab_report.apply_target(runs, 98.0, None)
    assert target["best_ms"] == 2.0 and target["target_ms"] == pytest.approx(2.0 / 0.98)
    assert [r.evals_to_target for r in runs] == [None, 3, 1, None, 2]
    s = ab_report.summarize(runs)
    assert s["off"]["reached"] == 1 and s["off"]["median_evals_to_target"] is None
    assert s["on"]["median_evals_to_target"] == 1.5
    assert s["on"]["evals_to_target"] == [1, 2]
    assert ab_report.apply_target(runs, 98.0, 2.0)["kind"] == "speedup"
    assert [r.evals_to_target for r in runs[1:]] == [3, 1, None, 2]  # 4.0 / 2 = 2.0
    s = ab_report.summarize(runs)
    assert "memory on reached the target in most runs" in ab_report.verdict(s, 4)
    runs2 = [rec("off", [4.0, 3.0, 2.0]), rec("on", [4.0, 2.0, 2.0])]
    ab_report.apply_target(runs2, 100.0, None)
    assert ab_report.verdict(ab_report.summarize(runs2), 2) == (
        "memory on needed 1 evaluations (median) to reach the target, memory off 2: 50 % fewer")


def test_a_stopped_experiment_judges_only_seeds_with_both_arms_finished():
    whole_off, whole_on = rec("off", [4.0, 3.0, 2.0]), rec("on", [4.0, 2.0, 2.0])
    # seed 2: its "off" arm finished, its "on" arm stopped after one of two evaluations
    half_on = rec("on", [4.0, 2.0, 2.0], 2)
    half_on.evaluated = 1
    runs = [whole_off, whole_on, rec("off", [4.0, 4.0, 4.0], 2), half_on]
    ab_report.apply_target(runs, 100.0, None)
    assert ab_report.paired_runs(runs, stopped=True) == [whole_off, whole_on]
    judged = ab_report.summarize(ab_report.paired_runs(runs, stopped=True))
    assert judged["off"]["runs"] == judged["on"]["runs"] == 1
    assert "50 % fewer" in ab_report.verdict(judged, 2)
    # stopped inside the first seed: nothing to compare
    first = ab_report.summarize(ab_report.paired_runs([whole_off, half_on], stopped=True))
    assert ab_report.verdict(first, 2) == ("stopped before any seed ran both arms to the end: "
                                           "no verdict")


class SharedPool(Evaluator):
    """The session's CPU pool for the command, which must not close it (``close`` is the
    default: nothing)."""

    def __init__(self, pool):
        self.pool, self.lanes, self.devices = pool, pool.lanes, pool.devices

    @property
    def is_cpu(self):
        return self.pool.is_cpu

    async def aevaluate(self, request):
        return await self.pool.aevaluate(request)

    async def acompare(self, task, incumbent, challenger, timeout_s=300.0):
        return await self.pool.acompare(task, incumbent, challenger, timeout_s)

    async def asanitize(self, task, source, timeout_s=600.0):
        return await self.pool.asanitize(task, source, timeout_s)

    def device_facts(self):
        return self.pool.device_facts()

    def sandbox_state(self):
        return self.pool.sandbox_state()

    def start(self):
        self.pool.start()


def test_ab_command_on_the_cpu_interpreter(cpu_pool, tmp_path, monkeypatch):
    monkeypatch.setenv("EVOTUI_HOME", str(tmp_path / "user-home"))
    monkeypatch.setattr(cli_ab, "_open_pool", lambda device: SharedPool(cpu_pool))
    out = tmp_path / "ab"
    got = CliRunner().invoke(main, [
        "ab", str(SAMPLES / "rmsnorm"), "--learn", str(SAMPLES / "rmsnorm_fp16"), "--seeds", "1",
        "--iterations", "2", "--device", "cpu", "--fresh-library", "--out", str(out)])
    assert got.exit_code == 0, got.output
    assert "memory off" in got.output and "memory on" in got.output
    text = " ".join(got.output.split())
    assert "CPU interpreter: wall times, not kernel speed" in text
    assert f"results: {out / 'ab.json'}" in text
    data = json.loads((out / "ab.json").read_text())
    assert data["interpreter"] and data["device"] == "cpu" and len(data["runs"]) == 3
    assert all(r["evaluated"] == 2 for r in data["runs"])
    assert "**Triton CPU interpreter:**" in (out / "ab.md").read_text()
    assert not (tmp_path / "user-home" / "advice.json").exists()
    for a in AdviceStore(out / "home" / "advice.json").all():
        if a.source == "distilled":
            assert a.arch == "cpu" and "interpreter" in a.tags
    again = CliRunner().invoke(main, ["ab", str(SAMPLES / "rmsnorm"), "--out", str(out)])
    assert again.exit_code == 2 and "already holds an A/B experiment" in again.output
