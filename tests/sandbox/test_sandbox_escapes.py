"""Candidates that really try to reach beyond their evaluation, judged with the static rules
off so that only the operating system's containment stands in their way. Each test checks
the harm itself: the file unchanged, no connection, no process left, the secret nowhere in
what came back, the next honest candidate accepted."""

from __future__ import annotations

import os
import socket
import time
import uuid
from pathlib import Path

import pytest

from evotui.eval import EvalRequest, EvaluatorPool
from evotui.eval.sandbox import probe
from tests.conftest import SAMPLES

ESCAPES = Path(__file__).resolve().parents[1] / "escapes"
HONEST = (ESCAPES / "_honest.py").read_text()
SECRET = f"evotui-secret-{uuid.uuid4().hex}"

pytestmark = pytest.mark.skipif(not probe().complete,
                                reason=f"this kernel cannot sandbox: {probe().missing()}")


@pytest.fixture(scope="module")
def secret_env():
    os.environ["EVOTUI_TEST_SECRET"] = SECRET
    yield SECRET
    del os.environ["EVOTUI_TEST_SECRET"]


@pytest.fixture(scope="module")
def pool(secret_env):
    with EvaluatorPool("cpu", static_checks=False) as p:
        yield p


@pytest.fixture(scope="module")
def task():
    from evotui.task.model import resolve_task

    return resolve_task(SAMPLES / "softmax")


def candidate(name: str, **fields: object) -> str:
    return (ESCAPES / name).read_text().format(**fields) + "\n\n" + HONEST


def evaluate(pool, task, source: str, timeout: float = 60.0):
    return pool.evaluate(EvalRequest(task=task, source=source, timeout_s=timeout))


def honest_is_accepted(pool, task) -> bool:
    result = evaluate(pool, task, (SAMPLES / "softmax" / "seed.py").read_text())
    return result.accepted


def test_the_honest_wrapper_is_accepted(pool, task):
    """The escapes below add only their escape to this candidate."""
    result = evaluate(pool, task, HONEST.replace("        escape()\n", ""))
    assert result.accepted, result.message


def test_the_data_directory_and_run_directory_are_untouched(pool, task, tmp_path, monkeypatch):
    home, run = tmp_path / "home", tmp_path / "run"
    home.mkdir(), run.mkdir()
    canary, run_file = home / "advice.json", run / "report.json"
    canary.write_text("the user's advice")
    run_file.write_text("the run's report")
    result = evaluate(pool, task, candidate("write_home.py", canary=canary, run_file=run_file))
    assert canary.read_text() == "the user's advice"
    assert run_file.read_text() == "the run's report"
    assert result.accepted, result.message  # contained, so nothing to reject it for


def test_a_file_outside_the_scratch_folder_cannot_be_read(pool, task, tmp_path):
    canary = tmp_path / "private.txt"
    canary.write_text(SECRET)
    result = evaluate(pool, task, candidate("read_canary.py", canary=canary, task=task.path))
    assert not result.accepted and result.reason == "runtime_error"
    # refused by Landlock, or not there at all (under /tmp, hidden by the mount namespace)
    assert "stolen:" in result.message
    assert result.message.count("Permission denied") + result.message.count("No such file") == 2
    assert SECRET not in result.message + result.worker_output_tail
    assert "get_inputs" not in result.message + result.worker_output_tail


def test_no_connection_reaches_a_loopback_port(pool, task):
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.5)
    port = server.getsockname()[1]
    try:
        result = evaluate(pool, task, candidate("connect.py", port=port))
        with pytest.raises(TimeoutError):
            server.accept()
    finally:
        server.close()
    assert result.accepted, result.message


def _processes_named(token: str) -> list[int]:
    found = []
    for comm in Path("/proc").glob("[0-9]*/comm"):
        try:
            if comm.read_text().strip() == token[:15]:
                found.append(int(comm.parent.name))
        except OSError:
            continue
    return found


def test_no_process_outlives_the_evaluation(pool, task):
    token = f"esc{uuid.uuid4().hex[:8]}"
    evaluate(pool, task, candidate("outlive.py", token=token))
    deadline = time.monotonic() + 5
    while _processes_named(token) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _processes_named(token) == []
    assert honest_is_accepted(pool, task)


def test_the_users_environment_never_reaches_the_candidate(pool, task, secret_env):
    result = evaluate(pool, task, candidate("environment.py", secret=secret_env))
    assert secret_env not in result.message + result.worker_output_tail
    assert result.accepted, result.message


def test_the_environment_probe_finds_the_secret_without_the_sandbox(task, secret_env):
    """The probe above is a real one: with the sandbox off it finds the secret (in the
    pool's own process, through /proc)."""
    with EvaluatorPool("cpu", static_checks=False, sandbox=False) as unsandboxed:
        result = evaluate(unsandboxed, task, candidate("environment.py", secret=secret_env))
    assert not result.accepted and "found the secret" in result.message


def test_a_poisoned_worker_does_not_reach_the_next_candidate(pool, task):
    evaluate(pool, task, candidate("poison_next.py"))
    assert honest_is_accepted(pool, task)
    result = evaluate(pool, task, HONEST.replace("        escape()\n", ""))
    assert result.accepted, result.message


def test_no_local_service_is_reached_through_a_unix_socket(pool, task, tmp_path):
    servers = []
    path = tmp_path / "service.sock"
    abstract = f"evotui-test-{uuid.uuid4().hex}"
    for address in (str(path), "\0" + abstract):
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(address)
        server.listen()
        server.settimeout(0.5)
        servers.append(server)
    try:
        result = evaluate(pool, task, candidate("unix_sockets.py", path=path, abstract=abstract))
        for server in servers:
            with pytest.raises(TimeoutError):
                server.accept()
    finally:
        for server in servers:
            server.close()
    assert result.accepted, result.message


def test_no_program_runs(pool, task, tmp_path):
    marker = tmp_path / "owned"
    result = evaluate(pool, task, candidate("run_programs.py", marker=marker))
    assert not marker.exists()
    assert result.accepted, result.message


def test_killing_every_process_in_sight_harms_only_itself(pool, task):
    pids = {lane.candidate.proc.pid for lane in pool.lanes if lane.candidate.alive}
    pids |= {lane.judge.proc.pid for lane in pool.lanes if lane.judge.alive}
    evaluate(pool, task, candidate("kill_workers.py"))
    assert all(lane.candidate.alive and lane.judge.alive for lane in pool.lanes)
    assert {lane.candidate.proc.pid for lane in pool.lanes} | \
        {lane.judge.proc.pid for lane in pool.lanes} == pids
    assert honest_is_accepted(pool, task)


def test_a_task_under_a_hidden_folder_is_still_evaluated(pool, tmp_path):
    """The task file is the harness's to read: one under /tmp (hidden from the candidate by
    the mount namespace) loads all the same."""
    import shutil

    from evotui.task.model import resolve_task

    folder = tmp_path / "softmax"
    shutil.copytree(SAMPLES / "softmax", folder)
    moved = resolve_task(folder)
    result = evaluate(pool, moved, (folder / "seed.py").read_text())
    assert result.accepted, result.message


def test_bytes_planted_in_the_memfds_made_ready_never_reach_the_verdict(pool, task):
    """The memfds made ready for a candidate's outputs are in its process before they are
    filled: what it writes there first is overwritten whole (its zeros would be a
    mismatch), and one it could still write after the hand-over is refused."""
    planted = evaluate(pool, task, candidate("rewrite_outputs.py", keep=False))
    assert planted.accepted, planted.message
    kept = evaluate(pool, task, candidate("rewrite_outputs.py", keep=True))
    assert not kept.accepted and kept.reason == "tampered", (kept.reason, kept.message)
    assert honest_is_accepted(pool, task)
