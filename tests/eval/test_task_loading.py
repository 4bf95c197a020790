"""Each process loads a task file once for a given text (``evotui.task.loading``): the
parent for the run's facts, preflight and memory plan, the judge for its references; a
changed file is still noticed."""

from __future__ import annotations

import pytest

from evotui.task import loading
from evotui.task.errors import TaskChanged
from evotui.task.model import resolve_task, task_module
from tests.conftest import SAMPLES


@pytest.fixture
def task_dir(tmp_path):
    (tmp_path / "task.py").write_text((SAMPLES / "softmax" / "task.py").read_text())
    return tmp_path


def loads_of(path) -> int:
    return loading.LOADS.count(str(path))


def test_the_parent_loads_a_task_once_for_all_it_reads(task_dir):
    from evotui.engine.task_facts import describe_task
    from evotui.eval.memory_plan import TimingSetPlanner, set_bytes
    from evotui.task.preflight import preflight

    task = resolve_task(task_dir)
    preflight(task, cpu=True)
    assert not describe_task(task, "cpu").note
    task.cpu_shape()
    set_bytes(task, {})
    TimingSetPlanner(3, 1, lambda _: 80 << 30).count(task, {"dim": 1024}, "cuda:0")
    assert task_module(task.path, task.sha256) is task_module(task.path)
    assert loads_of(task.path) == 1


def test_a_changed_task_file_is_noticed(task_dir):
    task = resolve_task(task_dir)
    first = task_module(task.path, task.sha256)
    with (task_dir / "task.py").open("a") as f:
        f.write("\nModel.forward = lambda self, x: x * 0  # the reference, chosen\n")
    with pytest.raises(TaskChanged, match="changed on disk"):
        task_module(task.path, task.sha256)
    again = task_module(task.path)  # without a digest: the file as it is now
    assert again is not first and again.__evotui_sha256__ != task.sha256
    assert loads_of(task.path) == 2  # the resolve and the new text (the refused one is not kept)


def test_the_judge_loads_a_task_once_over_many_requests(task_dir):
    from evotui.eval.judge import Judge

    task = resolve_task(task_dir)
    judge = Judge("cpu")
    before = loads_of(task.path)
    keys = {judge._task(str(task.path), task.sha256)[0] for _ in range(5)}
    assert len(keys) == 1 and loads_of(task.path) == before  # the resolve's module, kept
