"""The control records of the worker protocol (which op, a worker's hello, the device's gate):
each comes back from its JSON as written, an op a worker cannot carry out is refused as
malformed, and a real worker answers a malformed op with a harness error and keeps serving."""

from __future__ import annotations

import json

import pytest

from evotui.core import reasons
from evotui.eval import protocol
from evotui.eval.control import (
    GATE_ASK,
    GATE_GRANTED,
    Done,
    Hello,
    Op,
    is_gate_ask,
    is_gate_granted,
)
from evotui.eval.messages import ABReport, MalformedMessage, Report, Request
from evotui.eval.workers import WorkerProcess, facts_of


def wire(record):
    return json.loads(json.dumps(record.to_json()))


def request() -> Request:
    return Request(task="/t/task.py", task_sha256="ab", scratch="/s", shapes=({"n": 4},),
                   init_seed=1, timing_seed=2, timing_seeds=(3, 4), recheck_seed=5,
                   candidate="/s/c.py")


@pytest.mark.parametrize("op", [
    Op("ping"), Op("release"), Op("shutdown"), Op("facts"),
    Op("evaluate", request(), timeout_s=30.0), Op("compare", request(), timeout_s=60.0),
    Op("judge", request(), Report(ok=False, reason="timeout", message="slow")),
    Op("check_ab", request(), ABReport(ok=True)),
])
def test_each_op_comes_back_from_its_json_as_it_was(op):
    assert Op.from_json(wire(op)) == op


@pytest.mark.parametrize("raw", [
    {"op": "rm -rf"},  # no such op
    {"op": "judge", "request": None},  # the verdict needs the request and the report
    {"op": "judge", "request": "x", "report": {"ok": True}},
    {"op": "evaluate"},
    {"timeout_s": 3},
    ["evaluate"],
])
def test_an_op_a_worker_cannot_carry_out_is_malformed(raw):
    with pytest.raises(MalformedMessage):
        Op.from_json(raw)


def test_building_an_op_without_what_it_needs_fails_at_once():
    with pytest.raises(MalformedMessage):
        Op("judge", request())  # no report
    with pytest.raises(MalformedMessage):
        Op("check_ab", request(), Report(ok=True))  # an evaluation's report for an A/B


def test_hello_gate_and_done_read_back():
    hello = Hello(True, 42, {"complete": True})
    assert Hello.from_json(wire(hello)) == hello
    assert Hello.from_json(wire(Hello(False, error="no torch"))).error == "no torch"
    assert is_gate_ask(GATE_ASK) and not is_gate_ask(GATE_GRANTED)
    assert is_gate_granted(GATE_GRANTED) and not is_gate_granted({"gate": "maybe"})
    assert facts_of(wire(Done(facts={"memory_bytes": 8}))) == {"memory_bytes": 8}
    assert facts_of({"ok": True, "facts": "lots"}) == {}  # malformed: no facts, no traceback


def test_a_real_worker_answers_a_malformed_op_with_a_harness_error_and_keeps_serving():
    worker = WorkerProcess("judge", "cpu", {})
    worker.start()
    try:
        assert worker.hello.ready and worker.hello.pid > 0
        assert worker.conn is not None
        protocol.send(worker.conn, {"op": "judge", "request": {"task": 3}})
        answer = protocol.recv(worker.conn)
        assert answer["ok"] is False and answer["reason"] == reasons.HARNESS_ERROR
        assert "request" in answer["message"]
        assert Done.from_json(worker.request(Op("ping"), 30)).ok
        assert facts_of(worker.request(Op("facts"), 30)) == {}  # a CPU judge has none
    finally:
        worker.stop()
    assert not worker.alive
