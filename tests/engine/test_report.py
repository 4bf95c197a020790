"""What a run's end says: the one-line summary of its best (report.md, the headless end
line), the best against the seed in words, a parent id its lineage agrees with, one count of
evaluated children, and a clean end when the model only repeats itself."""

from __future__ import annotations

import asyncio

from evotui.core.metrics import Metrics
from evotui.engine import events as ev
from evotui.engine.loop import Engine
from evotui.engine.mutators import DUPLICATE, Mutation
from evotui.engine.population import Candidate
from evotui.engine.report import best_summary, render_markdown
from evotui.engine.state import EngineConfig
from tests.engine_helpers import SOFTMAX_SEED, FakeEvaluator, ScriptedMutator, tagged


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


# ---- what a run's report and end say ---------------------------------------------------------
def _engine(softmax_task, make, **config):
    return Engine(softmax_task, FakeEvaluator(), ScriptedMutator(make),
                  EngineConfig(**{"iterations": 20, "concurrency": 1, **config}),
                  seed_source=SOFTMAX_SEED)


def test_a_model_that_only_repeats_itself_ends_the_run_cleanly_with_the_best(softmax_task):
    def make(parent: str, n: int):
        if n <= 2:  # two new programs, the second one faster
            return tagged(parent, n).replace("NUM_WARPS = 8", "NUM_WARPS = 4")
        return Mutation(parent, "llm", "scripted", "full")  # the parent again: a duplicate

    engine = _engine(softmax_task, make, max_consecutive_failures=4)
    result = asyncio.run(engine.run())
    assert result.outcome == "exhausted"  # not "failed": exit code 0
    assert "the model stopped giving new programs" in result.message
    assert f"the best, {result.best_id}, is kept" in result.message
    assert f"({DUPLICATE})" in result.message
    assert result.report["best"]["id"] == result.best_id != engine.state.seed_id


def test_a_server_that_is_down_is_still_a_failure(softmax_task):
    def make(parent: str, n: int):
        return Mutation(None, "llm", "scripted", "full", failure_kind="server_down",
                        failure="no Ollama server answers: run `ollama serve`")

    result = asyncio.run(_engine(softmax_task, make).run())
    assert result.outcome == "failed"


def test_the_stop_message_counts_what_finished_after_the_stop(softmax_task):
    async def go():
        engine = Engine(softmax_task, FakeEvaluator(delay=0.3, lanes=3),
                        ScriptedMutator(tagged), EngineConfig(iterations=50, concurrency=3),
                        seed_source=SOFTMAX_SEED)
        seen: list[ev.Event] = []
        engine.subscribe(seen.append)
        task = asyncio.create_task(engine.run())
        while engine.state.evaluated < 2 or engine.in_flight < 2:
            await asyncio.sleep(0.01)
        engine.stop(5.0)
        return engine, await task, seen

    engine, result, seen = asyncio.run(go())
    finished = [e for e in seen if isinstance(e, ev.RunFinished)][0]
    n = result.report["evaluated"]
    assert n > 2  # the ones in flight at the stop were recorded after it
    assert result.message == f"stopped on request after {n} evaluated children"
    assert finished.message == result.message and finished.evaluated == n


def _crafted(softmax_task, interpreter=False):
    engine = Engine(softmax_task, FakeEvaluator(cpu=interpreter), ScriptedMutator(tagged),
                    EngineConfig(iterations=5), seed_source=SOFTMAX_SEED)
    pop = engine.population
    seed = Candidate(id="c0001", source=SOFTMAX_SEED, mutator="seed", status="accepted",
                     metrics=Metrics(time_ms=0.281 if not interpreter else 24.0))
    copy = Candidate(id="c0002", source=SOFTMAX_SEED, mutator="seed", status="accepted",
                     island=1, parent_id="c0001", copy_of="c0001", metrics=seed.metrics)
    child = Candidate(id="c0003", source=tagged(SOFTMAX_SEED, 3), parent_id="c0002", island=1,
                      mutator="llm", status="accepted",
                      metrics=Metrics(time_ms=seed.metrics.time_ms / 1.42))
    for c in (seed, copy, child):
        pop.add(c)
    engine.state.seed_id, engine.state.best_id = "c0001", "c0003"
    return engine


def test_the_best_parent_is_the_program_its_lineage_names(softmax_task):
    report = _crafted(softmax_task).report()
    assert report["best"]["lineage"] == ["c0001", "c0003"]
    assert report["best"]["parent_id"] == report["best"]["lineage"][-2] == "c0001"
    assert "gpu_seconds" not in report  # the GPU's busy time is not measured


def test_report_md_gives_the_speedup_over_the_seed_in_words(softmax_task):
    md = render_markdown(_crafted(softmax_task).report())
    assert "| best vs the seed | 1.42× faster than the seed c0001: 281.0 µs → 197.9 µs |" in md
    assert "GPU:" not in md
    md = render_markdown(_crafted(softmax_task, interpreter=True).report())
    assert ("1.42× faster than the seed c0001 in interpreter wall time (not a kernel speed): "
            "24.0 ms → 16.9 ms") in md
