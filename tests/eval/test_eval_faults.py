"""A candidate that crashes, hangs, exits, raises or floods costs one rejected candidate and
one worker restart; the next candidate in the same pool is evaluated normally."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from evotui.eval import EvalRequest
from tests.conftest import CANDIDATES, SAMPLES

SOFTMAX = CANDIDATES / "softmax"


def run(pool, task, name: str, timeout: float = 60.0):
    source = (SOFTMAX / name).read_text()
    return pool.evaluate(EvalRequest(task=task, source=source, name=name, timeout_s=timeout))


def seed_is_accepted(pool, task) -> bool:
    source = (SAMPLES / "softmax" / "seed.py").read_text()
    return pool.evaluate(EvalRequest(task=task, source=source)).accepted


@pytest.mark.parametrize(("name", "reason"), [
    ("fault_raise.py", "runtime_error"),
    ("fault_flood.py", "output_flood"),
    ("fault_syntax.py", "syntax_error"),
])
def test_faults_are_rejected_and_the_pool_recovers(cpu_pool, softmax_task, name, reason):
    result = run(cpu_pool, softmax_task, name)
    assert (result.accepted, result.reason) == (False, reason), result.message
    assert seed_is_accepted(cpu_pool, softmax_task)


def test_a_segfault_is_rejected_and_the_pool_recovers(raw_cpu_pool, softmax_task):
    result = run(raw_cpu_pool, softmax_task, "fault_segfault.py")
    assert (result.accepted, result.reason) == (False, "crashed"), result.message
    assert seed_is_accepted(raw_cpu_pool, softmax_task)


def test_a_wild_load_in_a_kernel_stops_at_the_interpreters_bounds(cpu_pool, softmax_task):
    """It used to kill the CPU worker (SIGSEGV): the interpreter's pointers are host addresses."""
    source = (SOFTMAX / "cheat_shape_specialised.py").read_text()
    result = cpu_pool.evaluate(EvalRequest(task=softmax_task, source=source))
    assert (result.accepted, result.reason) == (False, "out_of_bounds"), result.message
    assert "outside the tensors passed to its launch" in result.message


def test_a_hang_times_out_and_the_pool_recovers(cpu_pool, softmax_task):
    result = run(cpu_pool, softmax_task, "fault_hang.py", timeout=8)
    assert (result.accepted, result.reason) == (False, "timeout")
    assert result.wall_s < 30
    assert seed_is_accepted(cpu_pool, softmax_task)


@pytest.mark.parametrize(("name", "reason"), [
    ("fault_exit.py", "crashed"),
    ("fault_kill.py", "crashed"),
    # started in forward: a violation as it starts, else left running
    ("fault_spawn_thread.py", "torch_fallback|threads_spawned"),
    ("fault_spawn_thread_init.py", "threads_spawned"),
])
def test_runtime_defences_hold_without_static_rules(raw_cpu_pool, softmax_task, name, reason):
    result = run(raw_cpu_pool, softmax_task, name)
    assert not result.accepted and result.reason in reason.split("|"), result.message
    assert seed_is_accepted(raw_cpu_pool, softmax_task)


def test_the_raise_message_names_the_candidate_line(cpu_pool, softmax_task):
    result = run(cpu_pool, softmax_task, "fault_raise.py")
    assert "ValueError: the model forgot to define the grid" in result.message
    assert "line" in result.message


def test_a_forged_worker_report_cannot_accept_anything(raw_cpu_pool, softmax_task):
    """Invariant 2: the verdict is the judge's. A candidate that rewrites the worker so later
    reports would claim success is caught itself — the harness's code is re-read by
    identity after every candidate — and its worker is replaced, so the next candidate is
    judged normally."""
    forger = run(raw_cpu_pool, softmax_task, "cheat_forge_report.py")
    assert (forger.accepted, forger.reason) == (False, "timer_tampered"), forger.message
    victim = run(raw_cpu_pool, softmax_task, "cheat_no_kernel.py")
    assert (victim.accepted, victim.reason) == (False, "no_kernel"), victim.message
    assert seed_is_accepted(raw_cpu_pool, softmax_task)


def test_a_harness_error_gets_fresh_workers_for_the_next_candidate(cpu_pool, softmax_task, tmp_path):
    """A failure of the harness itself (here: the task's reference Model raises in the judge)
    is nobody's verdict on the candidate; the lane's processes are replaced, so whatever broke
    (out of GPU memory, a bad cache) does not carry over to the retry."""
    from evotui.task.model import resolve_task

    broken = tmp_path / "task.py"
    text = softmax_task.path.read_text()
    assert "    def forward(self, x" in text
    broken.write_text(text.replace("    def forward(self, x",
                                   "    def forward(self, x, *_):\n"
                                   "        raise RuntimeError('the reference broke')\n\n"
                                   "    def _unused(self, x", 1))
    task = resolve_task(broken)
    seed = (SAMPLES / "softmax" / "seed.py").read_text()
    lane = cpu_pool.lanes[0]
    assert seed_is_accepted(cpu_pool, softmax_task)
    before = (lane.candidate.proc.pid, lane.judge.proc.pid)
    result = cpu_pool.evaluate(EvalRequest(task=task, source=seed))
    assert result.reason == "harness_error" and "the reference broke" in result.message
    assert not lane.candidate.alive and not lane.judge.alive
    assert seed_is_accepted(cpu_pool, softmax_task)
    assert (lane.candidate.proc.pid, lane.judge.proc.pid) != before


def test_a_cancelled_evaluation_frees_its_lane_at_once(cpu_pool, softmax_task):
    """A stopped run cancels what it has in flight: the candidate's worker is killed, so the
    next run's seed does not wait for a hang to reach its timeout."""
    import asyncio

    source = (SOFTMAX / "fault_hang.py").read_text()

    async def cancel_a_hang() -> float:
        work = asyncio.ensure_future(cpu_pool.aevaluate(
            EvalRequest(task=softmax_task, source=source, name="hang", timeout_s=600)))
        await asyncio.sleep(3)
        work.cancel()
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        while cpu_pool._free.qsize() < len(cpu_pool.lanes) and loop.time() - t0 < 120:
            await asyncio.sleep(0.1)
        return loop.time() - t0

    freed_after = asyncio.run(cancel_a_hang())
    assert freed_after < 60, "the hang kept its lane until its 600 s timeout would"
    assert seed_is_accepted(cpu_pool, softmax_task)


def _memfds(pid: int) -> list[str]:
    fds = Path(f"/proc/{pid}/fd")
    links = []
    for fd in fds.iterdir():
        try:
            links.append(os.readlink(fd))
        except OSError:  # closed while listed
            continue
    return [link for link in links if link.startswith("/memfd:")]


def test_a_judged_candidates_outputs_leave_the_host_memory_before_the_next_one(
        cpu_pool, softmax_task):
    """What a candidate hands over is host memory until the judge reads it; the worker then
    lets it go, so the device's next candidate (which may hand over as much) has the host's
    share to itself."""
    assert seed_is_accepted(cpu_pool, softmax_task)
    assert all(not _memfds(lane.candidate.proc.pid) for lane in cpu_pool.lanes)
