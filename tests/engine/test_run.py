"""``evotui run`` end to end on the CPU interpreter: a param run, a run against the loopback
model with messy answers, kill -9 and --resume, the model-missing paths, ``evotui doctor``.

The in-process runs share the session's ``cpu_pool``; the subprocess runs each start a pool.
"""

from __future__ import annotations

import asyncio
import io
import itertools
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from evotui import headless
from evotui.engine.session import RunOptions
from tests.conftest import ROOT, SAMPLES
from tests.engine_helpers import SOFTMAX_SEED_PATH
from tests.fake_ollama import FakeOllama, Reply, closed_port_url

pytestmark = pytest.mark.timeout(180)


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("EVOTUI_HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def env_for(home: Path, **extra: str) -> dict[str, str]:
    env = {**os.environ, "EVOTUI_HOME": str(home), "PYTHONPATH": str(ROOT), **extra}
    env.pop("OLLAMA_HOST", None)
    return env


def evotui(*args: str, env: dict[str, str], timeout: float = 170) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "evotui", *args], capture_output=True,
                          text=True, timeout=timeout, env=env, cwd=ROOT)


def run_inprocess(options: RunOptions, pool) -> tuple[int, str, str]:
    err, out = io.StringIO(), io.StringIO()
    console = Console(file=err, width=200, force_terminal=False)
    code = asyncio.run(headless.arun(options, evaluator=pool, console=console, out=out))
    return code, out.getvalue(), err.getvalue()


def test_param_run_writes_the_run_directory_and_best_py_benches(cpu_pool, home, tmp_path):
    out = tmp_path / "run"
    code, stdout, stderr = run_inprocess(RunOptions(
        task=str(SAMPLES / "softmax"), seed=str(SOFTMAX_SEED_PATH), device="cpu", iterations=8,
        mutator="param", out=str(out), memory_k=0), cpu_pool)
    assert code == 0, stderr
    report = json.loads((out / "report.json").read_text())
    # this softmax seed declares one tunable with 6 values: the search ends after 5 children
    assert report["outcome"] == "exhausted" and report["evaluated"] == 5
    assert report["task"] == "softmax" and report["device"] == "cpu" and report["interpreter"]
    assert report["seed_origin"] == f"file {SOFTMAX_SEED_PATH}"
    assert report["iterations"] == 8 and report["mutator"] == "param"
    assert report["accepted"] + report["rejected"] == 5
    best = report["best"]
    assert set(best) >= {"id", "time_ms", "speedup_eager", "speedup_compile", "roofline_pct"}
    assert best["time_ms"] > 0 and best["speedup_eager"] is None  # interpreter: no speedups
    assert report["llm"]["calls"] == 0 and report["evaluations_per_minute"] > 0
    assert report["eval_seconds"] > 0 and "gpu_seconds" not in report
    for name in ("report.md", "best.py", "events.jsonl", "checkpoint.json"):
        assert (out / name).is_file(), name
    kinds = [json.loads(x)["kind"] for x in (out / "events.jsonl").read_text().splitlines()]
    assert kinds[0] == "run_started" and kinds[-1] == "run_finished"
    assert "interpreter wall time" in stderr and "speedup" not in stderr
    assert "report:" in stdout
    p = evotui("bench", str(SAMPLES / "softmax"), str(out / "best.py"), "--device", "cpu",
               "--json", env=env_for(home))
    assert p.returncode == 0, p.stdout + p.stderr
    assert json.loads(p.stdout.strip().splitlines()[-1])["accepted"] is True


# ---- the loopback model -----------------------------------------------------------------

PARENT_IN_PROMPT = re.compile(r"# The current program \((c\d+)\)\n\n```python\n(.*?)\n```", re.S)


def messy_answer(parent: str, n: int) -> str:
    """Answers as small local models give them, about ``parent``: most usable, some not."""
    parent = parent.rstrip("\n") + "\n"
    variant = parent + f"\nEVO_VARIANT_{n} = {n}\n"
    anchor = "import triton.language as tl"
    forms = [
        f"<think>\nFewer registers? Let me draft:\n```python\nclass ModelNew: pass\n```\nNo.\n"
        f"</think>\nHere is the improved kernel:\n\n```python\n{variant}```\nThis should help.",
        f"Change one line:\n```python\n<<<<<<< SEARCH\n{anchor}\n=======\n{anchor}\n"
        f"EVO_VARIANT_{n} = {n}\n>>>>>>> REPLACE\n```\nDone.",
        "I believe the kernel is already optimal; maybe a larger block helps, or not.",
        f"```python\n{variant[: len(variant) // 2]}",  # cut off
        "Use exp2:\n<<<<<<< SEARCH\n    x = x * 2.0\n=======\n    x = x * 3.0\n>>>>>>> REPLACE\n",
        f"```python\n{variant.replace('def forward(self, x', 'def forward(self x')}```",
        f"Scaled the exponent (wrong on purpose):\n```python\n"
        f"{variant.replace('e = tl.exp(x)', 'e = tl.exp(x * 1.5)')}```",
        variant,  # a bare program, no fences
        f"</think>\nFinal answer:\n```py\n{variant}```\n",
    ]
    return forms[n % len(forms)]


def test_run_against_loopback_model_with_messy_answers(cpu_pool, home, tmp_path):
    counter = itertools.count(1)

    def answer(request: dict) -> str:
        match = PARENT_IN_PROMPT.search(request["messages"][-1]["content"])
        return messy_answer(match.group(2) if match else "", next(counter))

    out = tmp_path / "run"
    with FakeOllama(default=answer) as fake:
        fake.script(Reply("half an answer " * 8, fault="error_midstream"),
                    Reply("", fault="http_500"))
        code, stdout, stderr = run_inprocess(RunOptions(
            task=str(SAMPLES / "softmax"), device="cpu", iterations=10, mutator="llm",
            ollama_host=fake.url, out=str(out), memory_k=0, llm_backoff=0.01), cpu_pool)
        chats = fake.requests_to("/api/chat")
    assert code == 0, stderr
    report = json.loads((out / "report.json").read_text())
    assert report["outcome"] == "completed" and report["evaluated"] == 10
    assert report["mutator"] == "llm" and report["model"] == "qwen2.5-coder:7b"
    llm = report["llm"]
    assert llm["failures"] > 0 and llm["retries"] >= 1
    assert {"no_code", "truncated", "patch_failed", "syntax_error"} <= set(llm["failures_by_kind"])
    assert sum(llm["failures_by_kind"].values()) == llm["failures"]
    assert llm["calls"] >= 10 and llm["prompt_tokens"] > 0 and llm["completion_tokens"] > 0
    assert report["rejected_by_reason"].get("mismatch", 0) >= 1  # the wrong answer is caught
    # every prompt carries its parent's whole program
    from evotui.engine.rundir import load_checkpoint

    population = load_checkpoint(out)["population"]["candidates"]  # programs: sources.jsonl
    sources = {c["id"]: c["source"] for c in population}
    assert len(chats) >= llm["calls"]
    for req in chats:
        user = req.body["messages"][-1]["content"]
        match = PARENT_IN_PROMPT.search(user)
        assert match, user[:500]
        assert sources[match.group(1)].strip() in user
        assert "Triton" in req.body["messages"][0]["content"]  # the backend's dialect
    # a rejected child's reason reaches its parent's next prompt
    assert any("previous attempt to improve this program" in r.body["messages"][-1]["content"]
               for r in chats)
    assert len(list((out / "llm").glob("c*.md"))) >= 10  # prompt + answer behind each mutation


def test_llm_mode_without_a_server_exits_2_with_the_fix(home):
    p = evotui("run", str(SAMPLES / "softmax"), "--headless", "--device", "cpu",
               "--mutator", "llm", "--ollama-host", closed_port_url(), env=env_for(home),
               timeout=60)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert "ollama serve" in p.stderr and "ollama pull qwen2.5-coder:7b" in p.stderr


def test_auto_mode_falls_back_to_param_and_says_how_to_enable_the_llm(cpu_pool, home, tmp_path,
                                                                       monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", closed_port_url())  # honoured like the ollama client does
    code, stdout, stderr = run_inprocess(RunOptions(
        task=str(SAMPLES / "softmax"), device="cpu", iterations=1, out=str(tmp_path / "r"),
        memory_k=0), cpu_pool)
    assert code == 0, stderr
    line = next(x for x in stderr.splitlines() if x.startswith("No LLM"))
    assert "using the parameter mutator" in line
    assert "To enable the LLM: `ollama serve`, then `ollama pull qwen2.5-coder:7b`" in line
    report = json.loads((tmp_path / "r" / "report.json").read_text())
    assert report["mutator"] == "param" and report["evaluated"] == 1
    # a server without the model: only the pull is needed
    with FakeOllama(models=("llama3:8b",)) as fake:
        code, _, stderr = run_inprocess(RunOptions(
            task=str(SAMPLES / "softmax"), device="cpu", iterations=0, ollama_host=fake.url,
            out=str(tmp_path / "r2"), memory_k=0), cpu_pool)
    assert code == 0
    assert "To enable the LLM: `ollama pull qwen2.5-coder:7b`" in stderr


def test_kill_9_then_resume_continues_from_the_last_checkpoint(home, tmp_path):
    out = tmp_path / "run"
    args = ["run", str(SAMPLES / "add_gelu"), "--headless", "--device", "cpu",
            "--mutator", "param", "--iterations", "14", "--out", str(out)]
    proc = subprocess.Popen([sys.executable, "-m", "evotui", *args], env=env_for(home),
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    ck = out / "checkpoint.json"
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if ck.exists() and json.loads(ck.read_text()).get("evaluated", 0) >= 4:
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the run ended before it could be killed"
        os.killpg(proc.pid, signal.SIGKILL)  # the run and its evaluator workers
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    before = json.loads(ck.read_text())
    assert 4 <= before["evaluated"] < 14 and before["outcome"] is None
    assert not (out / "report.json").exists()  # it really died mid-run

    p = evotui("run", "--resume", str(out), "--headless", env=env_for(home))
    assert p.returncode == 0, p.stdout + p.stderr
    report = json.loads((out / "report.json").read_text())
    assert report["outcome"] == "completed" and report["evaluated"] == 14
    # where the seed came from survives the resume
    assert report["seed_origin"] == f"file {SAMPLES / 'add_gelu' / 'seed.py'}", report["seed_origin"]
    after = json.loads(ck.read_text())
    ids_before = {c["id"] for c in before["population"]["candidates"]}
    ids_after = {c["id"] for c in after["population"]["candidates"]}
    assert ids_before < ids_after  # the same population, grown
    children = [c for c in after["population"]["candidates"]
                if c["copy_of"] is None and c["mutator"] != "seed"]
    assert len(children) == 14
    events = [json.loads(x) for x in (out / "events.jsonl").read_text().splitlines()]
    starts = [e for e in events if e["kind"] == "run_started"]
    assert [s["resumed"] for s in starts] == [False, True]
    assert starts[1]["evaluated"] == before["evaluated"]
    assert sum(e["kind"] == "candidate_evaluated" for e in events) == 15  # seed + 14, once each


def test_ctrl_c_stops_cleanly_writes_the_report_and_resume_finishes(home, tmp_path):
    out = tmp_path / "run"
    args = ["run", str(SAMPLES / "add_gelu"), "--headless", "--device", "cpu",
            "--mutator", "param", "--iterations", "40", "--out", str(out)]
    proc = subprocess.Popen([sys.executable, "-m", "evotui", *args], env=env_for(home),
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ck = out / "checkpoint.json"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if ck.exists() and json.loads(ck.read_text()).get("evaluated", 0) >= 4:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 0, stderr
    assert "Traceback" not in stderr and "stopping" in stderr
    report = json.loads((out / "report.json").read_text())
    assert report["outcome"] == "stopped" and 4 <= report["evaluated"] < 40
    assert (out / "best.py").is_file() and "report:" in stdout
    assert json.loads(ck.read_text())["evaluated"] == report["evaluated"]  # nothing lost
    p = evotui("run", "--resume", str(out), "--headless", "--iterations", str(report["evaluated"] + 2),
               env=env_for(home))
    assert p.returncode == 0, p.stderr
    resumed = json.loads((out / "report.json").read_text())
    assert resumed["outcome"] == "completed" and resumed["evaluated"] == report["evaluated"] + 2


def test_new_run_refuses_an_existing_run_directory(cpu_pool, home, tmp_path):
    out = tmp_path / "r"
    out.mkdir()
    (out / "checkpoint.json").write_text("{}")
    code, _, _ = run_inprocess(RunOptions(task=str(SAMPLES / "softmax"), device="cpu",
                                          mutator="param", out=str(out)), cpu_pool)
    assert code == 2


def test_task_errors_are_one_line_and_exit_2(home, tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def get_inputs(:\n")
    p = evotui("run", str(bad), "--headless", "--mutator", "param", "--device", "cpu",
               env=env_for(home), timeout=60)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "syntax error" in p.stderr


def test_doctor_reports_every_part_with_its_fix(home):
    from evotui.cli.doctor import doctor

    runner = CliRunner()
    down = runner.invoke(doctor, ["--json", "--ollama-host", closed_port_url()])
    assert down.exit_code == 0, down.output  # torch + Triton work: a run can start
    checks = {c["name"]: c for c in json.loads(down.output)["checks"]}
    assert {"torch", "GPU", "Triton", "Triton interpreter", "cuda-python / NVRTC",
            "compute-sanitizer", "Dask (optional)", "Ollama server", "data directory"} <= set(checks)
    for optional in ("compute-sanitizer", "Dask (optional)"):  # never block a run, say how
        assert not checks[optional]["required"]
        assert checks[optional]["ok"] or checks[optional]["fix"]
    assert checks["Triton interpreter"]["ok"]
    assert not checks["Ollama server"]["ok"] and checks["Ollama server"]["fix"] == "ollama serve"
    assert checks["model qwen2.5-coder:7b"]["fix"] == "ollama pull qwen2.5-coder:7b"
    if not checks["GPU"]["ok"]:
        assert checks["GPU"]["fix"]
    with FakeOllama(models=("qwen2.5-coder:7b",)) as fake:
        up = runner.invoke(doctor, ["--ollama-host", fake.url])
    assert up.exit_code == 0
    assert "Ollama server" in up.output and "ollama pull nomic-embed-text" in up.output


def test_engine_eval_and_headless_never_import_textual():
    code = ("import sys\nimport evotui.engine.loop, evotui.engine.session, evotui.engine.mutators\n"
            "import evotui.eval, evotui.headless, evotui.cli.run, evotui.cli.doctor\n"
            "bad = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))\n"
            "assert not bad, bad\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=60)
    assert p.returncode == 0, p.stderr
