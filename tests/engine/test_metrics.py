"""One ``Metrics`` record from the evaluator to the population, the events, the report and
the TUI; the JSON keeps its keys; counts have one owner; a config key is computed once."""

from __future__ import annotations

import asyncio
import json
from collections import Counter

import pytest

from evotui.core.metrics import Metrics
from evotui.engine import population as population_module
from evotui.engine import proposing as proposing_module
from evotui.engine.events import CandidateEvaluated, GenerationDone, event_from_dict
from evotui.engine.loop import Engine
from evotui.engine.population import Candidate, Population
from evotui.engine.state import EngineConfig
from evotui.engine.tunables import config_key
from evotui.eval.results import EvalResult
from tests.engine_helpers import SOFTMAX_SEED, FakeEvaluator, ScriptedMutator, tagged

pytestmark = pytest.mark.timeout(60)

FIGURES = Metrics(time_ms=0.0388, spread_pct=0.4, timing_method="graph", speedup_eager=11.8,
                  speedup_compile=1.08, roofline_pct=81.0, copy_pct=93.2, max_abs_err=1e-6,
                  launches=(("softmax_kernel", 1),), interpreter=False, wall_s=0.7)
# the keys a line of events.jsonl and report.json had before the record existed
OLD_KEYS = {"time_ms", "spread_pct", "speedup_eager", "speedup_compile", "roofline_pct",
            "interpreter", "wall_s"}


def test_the_evaluator_result_gives_the_record():
    r = EvalResult(True, "accepted", "ok", time_ms=0.0388, spread_pct=0.4,
                   timing_method="graph", speedup_eager=11.8, speedup_compile=1.08,
                   roofline_pct=81.0, copy_pct=93.2, max_abs_err=1e-6,
                   launches={"softmax_kernel": 1}, wall_s=0.7)
    assert r.metrics == FIGURES


def test_the_record_goes_to_json_flat_and_back_under_a_prefix():
    d = json.loads(json.dumps(FIGURES.to_dict("best_")))
    assert d["best_time_ms"] == 0.0388 and d["best_launches"] == {"softmax_kernel": 1}
    assert Metrics.from_dict(d, "best_") == FIGURES
    assert Metrics.from_dict({}) == Metrics()
    assert Metrics.from_dict({"interpreter": None, "wall_s": None}) == Metrics()


def test_an_evaluated_event_keeps_its_json_keys_and_reads_old_lines():
    ev = CandidateEvaluated(id="c0007", accepted=True, reason="accepted", message="ok",
                            metrics=FIGURES, parent_id="c0001", new_best=True, t=1.0)
    line = json.loads(ev.to_json())
    assert OLD_KEYS <= set(line) and "metrics" not in line and line["time_ms"] == 0.0388
    assert event_from_dict(line) == ev
    old = {"kind": "candidate_evaluated", "t": 1.0, "id": "c0007", "accepted": True,
           "reason": "accepted", "message": "ok", "time_ms": 0.0388, "spread_pct": 0.4,
           "speedup_eager": 11.8, "speedup_compile": 1.08, "roofline_pct": 81.0,
           "interpreter": False, "wall_s": 0.7, "parent_id": "c0001", "new_best": True,
           "improved": False}
    back = event_from_dict(old)
    assert isinstance(back, CandidateEvaluated)
    assert back.metrics.time_ms == 0.0388 and back.metrics.roofline_pct == 81.0
    assert back.metrics.copy_pct is None and back.new_best


def test_a_generation_event_writes_its_best_under_best_keys():
    ev = GenerationDone(generation=2, evaluated=5, accepted=4, rejected=1, best_id="c0007",
                        best=FIGURES, evals_per_minute=6.0, llm_calls=1, llm_failures=0,
                        prompt_tokens=1, completion_tokens=1, t=1.0)
    line = json.loads(ev.to_json())
    assert {"best_time_ms", "best_speedup_eager", "best_speedup_compile",
            "best_roofline_pct"} <= set(line) and "best" not in line
    assert event_from_dict(line) == ev


def test_a_checkpoint_from_before_the_record_reads_its_figures_from_extra():
    old = {"id": "c0003", "source": "x = 1\n", "status": "accepted", "time_ms": 0.2,
           "speedup_eager": 2.0, "speedup_compile": 1.1, "roofline_pct": 60.0,
           "extra": {"spread_pct": 0.5, "interpreter": False, "wall_s": 1.25,
                     "timing_method": "coarse", "copy_pct": 70.0, "improved": True}}
    c = Candidate.from_dict(old)
    assert c.metrics == Metrics(time_ms=0.2, spread_pct=0.5, timing_method="coarse",
                                speedup_eager=2.0, speedup_compile=1.1, roofline_pct=60.0,
                                copy_pct=70.0, wall_s=1.25)
    assert c.extra == {"improved": True}  # the figures live in the record only
    assert c.config_key == config_key("x = 1\n")
    d = c.to_dict()
    assert d["time_ms"] == 0.2 and d["spread_pct"] == 0.5 and "metrics" not in d
    assert Candidate.from_dict(json.loads(json.dumps(d))).to_dict() == d


def test_counts_come_from_the_population_alone():
    pop = Population(n_islands=2)
    pop.add(Candidate(id="c0001", source="s", mutator="seed", status="accepted"))  # + a copy
    pop.add(Candidate(id="c0003", source="a", mutator="llm", status="accepted"))
    pop.add(Candidate(id="c0004", source="b", mutator="param", status="rejected",
                      reason="mismatch"))
    pop.add(Candidate(id="c0005", source="c", mutator="param", status="pending"))
    every = pop.counts()
    assert every["by_status"] == {"pending": 1, "accepted": 2, "rejected": 1}
    children = pop.counts(seeds=False)
    assert children["by_status"] == {"pending": 1, "accepted": 1, "rejected": 1}
    assert children["by_reason"] == {"mismatch": 1}
    assert children["by_mutator"] == {"llm": {"evaluated": 1, "accepted": 1},
                                      "param": {"evaluated": 1, "accepted": 0}}


def test_the_report_events_and_population_hold_the_same_record(softmax_task):
    engine = Engine(softmax_task, FakeEvaluator(), ScriptedMutator(tagged),
                    EngineConfig(iterations=4, generation_size=2), seed_source=SOFTMAX_SEED)
    events: list = []
    engine.subscribe(events.append)
    asyncio.run(engine.run())
    evaluated = {e.id: e for e in events if isinstance(e, CandidateEvaluated)}
    for cid, e in evaluated.items():
        assert e.metrics is engine.population.get(cid).metrics
    report = engine.report()
    best = engine.best
    assert best is not None
    assert Metrics.from_dict(report["best"]) == best.metrics
    last = [e for e in events if isinstance(e, GenerationDone)][-1]
    assert last.best == best.metrics
    assert (last.accepted, last.rejected) == (report["accepted"], report["rejected"]) == (4, 0)


@pytest.fixture
def computed(monkeypatch) -> Counter[str]:
    """How many times the engine computed each source's config key."""
    counts: Counter[str] = Counter()

    def counting(source: str) -> str:
        counts[source] += 1
        return config_key(source)

    monkeypatch.setattr(population_module, "config_key", counting)
    monkeypatch.setattr(proposing_module, "config_key", counting)
    return counts


def test_each_child_config_key_is_computed_once(softmax_task, computed):
    engine = Engine(softmax_task, FakeEvaluator(), ScriptedMutator(tagged),
                    EngineConfig(iterations=6, n_islands=2, migration_interval=1),
                    seed_source=SOFTMAX_SEED)
    asyncio.run(engine.run())
    children = engine.state.children()
    assert len(children) == 6
    assert all(computed[c.source] == 1 for c in children), computed
    assert all(c.config_key in engine.state.tried for c in engine.population.candidates())


def test_a_parameter_child_carries_the_key_its_search_computed(softmax_task, computed):
    from evotui.engine.mutators import ParamMutatorAdapter

    engine = Engine(softmax_task, FakeEvaluator(), ParamMutatorAdapter(),
                    EngineConfig(iterations=4, n_islands=2), seed_source=SOFTMAX_SEED)
    asyncio.run(engine.run())
    children = engine.state.children()
    assert len(children) == 4
    assert not any(computed[c.source] for c in children), computed  # none again
    assert all(c.config_key == config_key(c.source) for c in children)
