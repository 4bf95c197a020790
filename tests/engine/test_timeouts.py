"""A timeout says whether the task is too big for the device or the candidate too slow."""

from __future__ import annotations

import asyncio

from evotui.engine import events as ev
from evotui.engine.loop import Engine
from evotui.engine.state import EngineConfig
from evotui.eval.results import EvalResult
from tests.engine_helpers import SOFTMAX_SEED, FakeEvaluator, ScriptedMutator, tagged

TIMED_OUT = "no result within 30 s; its processes were killed"


def _run(softmax_task, judge):
    engine = Engine(softmax_task, FakeEvaluator(judge, cpu=True), ScriptedMutator(tagged),
                    EngineConfig(iterations=2, concurrency=1, eval_timeout_s=30),
                    seed_source=SOFTMAX_SEED)
    seen: list[ev.Event] = []
    engine.subscribe(seen.append)
    result = asyncio.run(engine.run())
    return result, [e for e in seen if isinstance(e, ev.CandidateEvaluated)]


def test_a_seed_that_times_out_says_the_task_is_too_big_and_how_to_shrink_it(softmax_task):
    result, _ = _run(softmax_task, lambda source: EvalResult.rejected("timeout", TIMED_OUT))
    assert "the task is too big for this device at " in result.message
    assert "--shape NAME=VALUE" in result.message and "--eval-timeout" in result.message


def test_a_child_that_times_out_where_the_seed_finished_is_too_slow(softmax_task):
    def judge(source: str) -> EvalResult:
        if "EVO_VARIANT" in source:
            return EvalResult.rejected("timeout", TIMED_OUT)
        return EvalResult(True, "accepted", "ok", time_ms=1.0, wall_s=12.0, interpreter=True)

    result, evaluated = _run(softmax_task, judge)
    children = [e for e in evaluated if e.reason == "timeout"]
    assert children and all(e.message == f"{TIMED_OUT}: the seed's whole evaluation took 12 s "
                            "here, so the task fits this device: this candidate is too slow"
                            for e in children)
