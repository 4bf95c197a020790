"""The records between the pool, the candidate worker and the judge: each comes back from its
JSON as it was written, and a report that is not what a report must be (its candidate's
process forged or damaged it) is a clean rejection, never a traceback."""

from __future__ import annotations

import json

import pytest

from evotui.core import reasons
from evotui.eval.messages import (
    ABReport,
    Audited,
    Checked,
    Details,
    GhostReport,
    MalformedMessage,
    Report,
    Request,
    SetAfter,
    TimingReport,
    TrialReport,
    TrialSpec,
    Verdict,
    failure_reply,
)
from evotui.eval.timing_stats import FreshCheck, Timing

META = {"type_name": "torch.Tensor", "shape": [2, 3], "dtype": "torch.float32",
        "device": "cpu", "file": "/tmp/x.bin", "sha256": "00"}


def wire(record):
    """As it crosses a process boundary."""
    return json.loads(json.dumps(record.to_json()))


def timing() -> TimingReport:
    return TimingReport(
        median_ms=1.5, spread_pct=0.7, samples=40, method="events", seed=11, calls=40,
        launches=80, launches_per_call=2, outputs=(META,), recheck=Checked(12, (META,)),
        verify=Checked(13, (META,)), inputs_after=(SetAfter(11, 3, (META,)),),
        synced_ms=1.6, set_medians_ms=(1.4, 1.6), perturbed=3,
        graph_replay=Checked(14, (META,)), fresh_check=FreshCheck(1.0, 1.0, 5, 1.1),
        earlier_outputs=(Checked(11, (META,), 1),), audited=Audited(11, (META,), 2, 38),
        weights_changed=("weight",))


def test_each_record_comes_back_from_its_json_as_it_was():
    request = Request(task="/t/task.py", task_sha256="ab", scratch="/s", shapes=({"N": 4}, {}),
                      init_seed=1, timing_seed=2, timing_seeds=(3, 4), recheck_seed=5,
                      protected=("/home",), atol=1e-3, allow_torch=("aten::add",),
                      candidate="/s/c.py", trials=(TrialSpec(6, 1), TrialSpec(7, 0)), time=True,
                      handover_limit_bytes=1 << 30, verify_seed=8, ghost_seed=9, ghost_shape=1,
                      warm_seed=10)
    report = Report(ok=True, trials=(TrialReport(6, 1, 2, (META,), (META,), (META,)),),
                    policy={}, launches={"k": 2}, phases={"load": 0.5}, timing=timing(),
                    ghost=GhostReport(9, 1, (META,)), children=(42,), replaced=("x",),
                    gated=True, blobs=("/proc/1/fd/3", None), digest_key=77)
    ab = ABReport(ok=True, seed=5, timings=(timing().figures, timing().figures),
                  outputs=((META,), (META,)), audited=(None, Audited(3, (META,))),
                  weights_changed=((), ("w",)), watched_policy={"aten::mul": 1})
    verdict = Verdict(True, reasons.ACCEPTED, "fine",
                      Details(max_abs_err=1e-6, launches={"k": 2}, timing=timing().figures,
                              speedup_eager=2.0))
    for record in (request, report, ab, verdict, Verdict(False, reasons.STALE_OUTPUT, "no",
                                                         index=1)):
        assert type(record).from_json(wire(record)) == record
    assert request.timed_seeds == [3, 4]
    assert timing().figures == Timing(1.5, 0.7, 40, "events", 1.6, None, (1.4, 1.6))


BOTH = (Report, ABReport)


@pytest.mark.parametrize(("kinds", "answer"), [
    (BOTH, None), (BOTH, []), (BOTH, "ok"), (BOTH, {}), (BOTH, {"ok": "yes"}),
    (BOTH, {"ok": False, "reason": 3}), (BOTH, {"ok": True, "blobs": [3]}),
    (BOTH, {"ok": True, "digest_key": "k"}),
    ((Report,), {"ok": True, "trials": [{"seed": "1", "shape": 0, "launches": 1,
                                         "outputs": [], "inputs_after": []}]}),
    ((Report,), {"ok": True, "trials": [{"seed": 1}]}),
    ((Report,), {"ok": True, "policy": {"aten::add": "many"}}),
    ((Report,), {"ok": True, "timing": {"median_ms": 1.0}}),
    ((Report,), {"ok": True, "timing": []}),
    ((Report,), {"ok": True, "ghost": {"seed": 1, "outputs": {}}}),
    ((Report,), {"ok": True, "threads_started": True}),
    ((Report,), {"ok": True, "phases": {"load": "soon"}}),
    ((ABReport,), {"ok": True, "timings": [{"median_ms": 1.0}]}),
    ((ABReport,), {"ok": True, "outputs": [[3]]}),
    ((ABReport,), {"ok": True, "audited": [{"seed": 1}]}),
    ((ABReport,), {"ok": True, "weights_changed": [[1]]}),
])
def test_a_malformed_report_is_a_rejection_not_a_traceback(kinds, answer):
    for kind in kinds:
        with pytest.raises(MalformedMessage):
            kind.from_json(answer)
        report = kind.parse(answer)
        assert (report.ok, report.reason) == (False, reasons.TAMPERED)
        assert report.message.startswith("malformed report: ")


def test_a_worker_failure_reads_as_a_failed_report_and_as_a_rejection():
    reply = {**failure_reply(reasons.HARNESS_ERROR, "boom"), "traceback": "..."}
    report, verdict = Report.from_json(reply), Verdict.from_json(reply)
    assert (report.ok, report.reason, report.message) == (False, reasons.HARNESS_ERROR, "boom")
    assert (verdict.accepted, verdict.reason, verdict.message) == (False, reasons.HARNESS_ERROR,
                                                                   "boom")
    assert verdict.details == Details()


def test_the_judge_rejects_a_report_that_answers_other_seeds():
    from evotui.eval.judge import Judge

    request = Request(task="/nonexistent/task.py", task_sha256=None, scratch="/s",
                      shapes=({},), init_seed=1, timing_seed=2, timing_seeds=(2,),
                      recheck_seed=3, trials=(TrialSpec(4, 0),), ghost_seed=5)
    forged = Report(ok=True, trials=(TrialReport(99, 0, 1, (), ()),))
    verdict = Judge("cpu").judge(request, Report.from_json(wire(forged)))
    assert (verdict.accepted, verdict.reason) == (False, reasons.TAMPERED)
    assert verdict.message == "the report holds 1 trials, not the 1 asked for"
