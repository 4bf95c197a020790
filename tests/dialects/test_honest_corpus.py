"""Honest code from the wild is accepted: every candidate under tests/honest_corpus/ (one
folder per sample task, each file written in the style of a real kernel library or of a 7B
coder model) is judged by the real harness on the CPU, through one shared pool, and at least
95 % of them must be accepted. The rejected ones are printed with their reason and message.

The reverse holds too: what Triton's compiler refuses on a GPU is refused on the CPU (a kernel
reading a plain float module global).
"""

from __future__ import annotations

import time

import pytest

from evotui.eval import EvalRequest
from evotui.task.model import resolve_task
from tests.conftest import CANDIDATES, SAMPLES

CORPUS = SAMPLES.parent / "tests" / "honest_corpus"
FILES = sorted(CORPUS.glob("*/*.py"))
TARGET = 0.95
MIN_FILES = 40


def test_the_corpus_covers_the_sample_tasks():
    assert len(FILES) >= MIN_FILES
    tasks = {f.parent.name for f in FILES}
    assert tasks <= {p.name for p in SAMPLES.iterdir() if (p / "task.py").is_file()}
    assert len(tasks) >= 7


def test_honest_code_from_the_wild_is_accepted(cpu_pool, capsys):
    tasks = {}
    rejected = []
    start = time.perf_counter()
    for path in FILES:
        name = path.parent.name
        task = tasks.get(name) or tasks.setdefault(name, resolve_task(SAMPLES / name))
        result = cpu_pool.evaluate(EvalRequest(task=task, source=path.read_text(),
                                               name=path.name))
        if not result.accepted:
            rejected.append((f"{name}/{path.name}", result.reason, result.message))
    elapsed = time.perf_counter() - start
    accepted = len(FILES) - len(rejected)
    with capsys.disabled():
        print(f"\nhonest corpus: {accepted}/{len(FILES)} accepted "
              f"({accepted / len(FILES):.0%}) in {elapsed:.0f} s")
        for where, reason, message in rejected:
            print(f"  rejected {where}: {reason}: {message[:300]}")
    report = "\n".join(f"{w}: {r}: {m[:300]}" for w, r, m in rejected)
    assert accepted >= TARGET * len(FILES), report


@pytest.mark.parametrize("name", ["gpu_refused_float_global.py",
                                  "gpu_refused_int_global.py"])
def test_a_kernel_reading_a_plain_module_global_is_refused_as_on_a_gpu(cpu_pool, name):
    """Triton's compiler refuses a kernel that reads a module global which is not a
    `tl.constexpr` ("Cannot access global variable SQRT_2 from within @jit'ed function"):
    the CPU interpreter would run it, so the rules refuse it first, saying how to fix it."""
    source = (CANDIDATES / "add_gelu" / name).read_text()
    result = cpu_pool.evaluate(EvalRequest(task=resolve_task(SAMPLES / "add_gelu"),
                                           source=source, name=name))
    assert (result.accepted, result.reason) == (False, "forbidden_construct"), result.message
    assert "tl.constexpr" in result.message
