"""What the static rules no longer refuse is the sandbox's to contain: with the rules on, a
candidate may read files (``pathlib``) and its environment (``os.environ``), and what it
reads that way holds nothing of the user's. Each test checks the harm itself: the
canary's text and the secret appear nowhere in what came back."""

from __future__ import annotations

import os
import uuid

import pytest

from evotui.eval import EvalRequest, EvaluatorPool
from evotui.eval.sandbox import probe
from tests.conftest import SAMPLES

SECRET = f"evotui-secret-{uuid.uuid4().hex}"
HONEST = (SAMPLES.parent / "tests" / "escapes" / "_honest.py").read_text()

pytestmark = pytest.mark.skipif(not probe().complete,
                                reason=f"this kernel cannot sandbox: {probe().missing()}")


@pytest.fixture(scope="module")
def pool():
    os.environ["EVOTUI_TEST_SECRET"] = SECRET
    try:
        with EvaluatorPool("cpu") as p:  # the static rules on
            yield p
    finally:
        del os.environ["EVOTUI_TEST_SECRET"]


@pytest.fixture(scope="module")
def task():
    from evotui.task.model import resolve_task

    return resolve_task(SAMPLES / "softmax")


def evaluate(pool, task, escape: str):
    source = escape + "\n\n" + HONEST
    return pool.evaluate(EvalRequest(task=task, source=source, timeout_s=60))


@pytest.mark.parametrize("kind", ["canary", "task"])
def test_a_file_read_through_pathlib_stays_outside(pool, task, tmp_path, kind):
    canary = tmp_path / "private.txt"
    canary.write_text(SECRET)
    path = canary if kind == "canary" else task.path
    escape = ("from pathlib import Path\n\n\ndef escape():\n"
              f"    raise RuntimeError('read: ' + Path({str(path)!r}).read_text())\n")
    result = evaluate(pool, task, escape)
    assert result.reason in ("runtime_error", "load_error"), (result.reason, result.message)
    assert "Permission denied" in result.message or "No such file" in result.message
    assert SECRET not in result.message + result.worker_output_tail
    assert "get_inputs" not in result.message + result.worker_output_tail


def test_the_environment_read_through_os_holds_none_of_the_users_variables(pool, task):
    escape = ("import os\n\n\ndef escape():\n"
              "    raise RuntimeError('secret: ' + str(os.getenv('EVOTUI_TEST_SECRET'))\n"
              "                       + ' names: ' + ','.join(sorted(os.environ.keys()))\n"
              "                       + ' values: ' + repr(sorted(os.environ.copy().values())))\n")
    result = evaluate(pool, task, escape)
    assert result.reason == "runtime_error", (result.reason, result.message)
    assert "secret: None" in result.message
    assert "TRITON_CACHE_DIR" in result.message  # it did read its own environment
    names = result.message.split(" names: ", 1)[1].split(" values: ", 1)[0]
    assert "EVOTUI_TEST_SECRET" not in names
    assert SECRET not in result.message + result.worker_output_tail
