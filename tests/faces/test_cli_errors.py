"""A user's mistake on the command line: one ``error: ...`` line on stderr, exit code 2, never
a traceback (empty paths, damaged checkpoints and advice records, options that clash with
--resume, a malformed --scheduler, an unusable EVOTUI_HOME, ``ab`` without a seed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from evotui.cli import ab as cli_ab
from evotui.cli.main import main
from evotui.core.metrics import Metrics
from evotui.engine.population import Candidate
from evotui.engine.rundir import RunDir
from evotui.engine.state import EngineConfig, RunState
from evotui.memory import AdviceStore
from tests.conftest import ROOT, SAMPLES
from tests.faces.test_ab import SharedPool

pytestmark = pytest.mark.timeout(120)
ROW_SUM = SAMPLES / "row_sum"


def evotui(*args: str, home: Path, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "EVOTUI_HOME": str(home), "PYTHONPATH": str(ROOT)}
    env.pop("OLLAMA_HOST", None)
    return subprocess.run([sys.executable, "-m", "evotui", *args], capture_output=True,
                          text=True, timeout=110, env=env, cwd=cwd)


def one_line_error(stderr: str, *fragments: str) -> None:
    assert "Traceback" not in stderr, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), stderr
    for fragment in fragments:
        assert fragment in lines[0], stderr


@pytest.fixture
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("EVOTUI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("COLUMNS", "160")
    return tmp_path / "home"


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


# ---- 1. ab: a task without seed.py ---------------------------------------------------------

@pytest.fixture
def seedless(tmp_path) -> Path:
    task = tmp_path / "seedless"
    task.mkdir()
    (task / "task.py").write_text((ROW_SUM / "task.py").read_text())
    return task


def test_ab_on_a_task_without_seed_asks_for_seed_and_takes_it(home, seedless, tmp_path,
                                                              cpu_pool, monkeypatch):
    r = invoke("ab", str(seedless), "--device", "cpu", "--out", str(tmp_path / "ab"))
    assert r.exit_code == 2
    one_line_error(r.output, "has no seed candidate", "pass --seed FILE")
    r = invoke("ab", str(ROW_SUM), "--learn", str(seedless), "--out", str(tmp_path / "ab"))
    assert r.exit_code == 2
    one_line_error(r.output, f"--learn task {seedless} has no seed candidate")

    monkeypatch.setattr(cli_ab, "_open_pool", lambda device: SharedPool(cpu_pool))
    out = tmp_path / "ab"
    r = invoke("ab", str(seedless), "--seed", str(ROW_SUM / "seed.py"), "--seeds", "1",
               "--iterations", "1", "--device", "cpu", "--fresh-library", "--out", str(out))
    assert r.exit_code == 0, r.output
    runs = json.loads((out / "ab.json").read_text())["runs"]
    assert [(x["arm"], x["evaluated"]) for x in runs] == [("off", 1), ("on", 1)]


def test_ab_help_describes_every_option(home):
    r = invoke("ab", "--help")
    text = " ".join(r.output.split())
    assert "--seed FILE Seed candidate of TASK" in text
    assert "--device [auto|cuda|cpu] cuda: every visible GPU" in text
    assert "--mutator [param|llm|mixed] How children are made" in text
    assert "--ollama-host URL Ollama server" in text


# ---- 2. empty paths -------------------------------------------------------------------------

def test_an_empty_out_is_refused_not_the_current_directory(home, tmp_path):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    p = evotui("run", str(ROW_SUM), "--headless", "--device", "cpu", "--mutator", "param",
               "--out", "", home=home, cwd=cwd)
    assert p.returncode == 2
    one_line_error(p.stderr, "--out is empty")
    assert list(cwd.iterdir()) == []


@pytest.mark.parametrize("args", [
    ("advice", "export", ""), ("advice", "import", ""), ("ab", str(ROW_SUM), "--out", ""),
    ("run", str(ROW_SUM), "--headless", "--seed", ""), ("run", "", "--headless"),
])
def test_empty_paths_exit_2(home, args):
    r = invoke(*args)
    assert r.exit_code == 2
    one_line_error(r.output, "is empty: give a path")


# ---- 3. a damaged checkpoint ------------------------------------------------------------------

def _run_dir(path: Path) -> Path:
    state = RunState.new(EngineConfig())
    state.population.add(Candidate(id="c0001", source=(ROW_SUM / "seed.py").read_text(),
                                   mutator="seed", status="accepted",
                                   metrics=Metrics(time_ms=1.0)))
    rd = RunDir(path)
    rd.write_checkpoint({**state.to_dict(0.0), "task": str((ROW_SUM / "task.py").resolve()),
                         "run": {"mutator": "param", "device": "cpu"}})
    rd.close()
    return path


def _damage(path: Path, edit) -> None:
    file = path / "checkpoint.json"
    data = json.loads(file.read_text())
    edit(data)
    file.write_text(json.dumps(data))


DAMAGES = {
    "no population": (lambda d: d.pop("population"), "no 'population' object"),
    "candidates not a list": (lambda d: d["population"].update(candidates=5),
                              "'population.candidates' is not a list of objects"),
    "bad rng": (lambda d: d.update(rng=[3, [1, 2], None]), "wrong size"),
    "rng not a list": (lambda d: d.update(rng="x"), "'rng' is not a random generator state"),
    "config of the wrong type": (lambda d: d["config"].update(iterations="abc"),
                                 "config 'iterations' is 'abc', expected int"),
    "population key missing": (lambda d: d["population"].pop("n_islands"),
                               "'n_islands' is missing"),
}


@pytest.mark.parametrize("damage", DAMAGES, ids=list(DAMAGES))
def test_resume_and_distill_of_a_damaged_checkpoint_exit_2(home, tmp_path, damage):
    edit, why = DAMAGES[damage]
    run = _run_dir(tmp_path / "run")
    _damage(run, edit)
    expected = f"{run / 'checkpoint.json'} is damaged ("
    p = evotui("run", "--resume", str(run), "--headless", home=home)
    assert p.returncode == 2
    one_line_error(p.stderr, expected, why)
    r = invoke("advice", "distill", str(run), "--no-llm")
    assert r.exit_code == 2
    one_line_error(r.output, expected, why)


def test_an_intact_checkpoint_still_loads(tmp_path):
    from evotui.engine.rundir import load_checkpoint

    ck = load_checkpoint(_run_dir(tmp_path / "run"))
    assert ck["population"]["candidates"][0]["source"].startswith(
        (ROW_SUM / "seed.py").read_text()[:20])


# ---- 4. damaged advice records --------------------------------------------------------------

BAD_FIELDS = {"tags": 5, "gain": "abc", "counters": [1], "status": "weird", "text": 5}


def _damage_library(home: Path) -> dict[str, str]:
    """Break one record per bad field; field → id."""
    AdviceStore().close()  # the cold-start pack
    file = home / "advice.json"
    data = json.loads(file.read_text())
    ids = dict(zip(BAD_FIELDS, list(data["advice"]), strict=False))
    for name, advice_id in ids.items():
        data["advice"][advice_id][name] = BAD_FIELDS[name]
    file.write_text(json.dumps(data))
    return ids


def test_list_and_audit_skip_damaged_records_and_name_them(home):
    ids = _damage_library(home)
    for args in (("list",), ("list", "--json"), ("audit",), ("audit", "--json"),
                 ("export", "-")):
        r = CliRunner().invoke(main, ["advice", *args])
        assert r.exit_code == 0, r.output
        assert "Traceback" not in r.output
        warning = next(x for x in r.output.splitlines() if x.startswith("warning:"))
        assert "5 damaged records" in warning and all(i in warning for i in ids.values())
        assert "counters is [1]" in warning and "status is 'weird'" in warning
    listed = CliRunner().invoke(main, ["advice", "list", "--json"])
    good = json.loads(listed.stdout)
    assert good and not {a["id"] for a in good} & set(ids.values())


def test_show_of_a_damaged_record_exit_2_and_rm_removes_it(home):
    ids = _damage_library(home)
    r = invoke("advice", "show", ids["tags"])
    assert r.exit_code == 2
    one_line_error(r.output, f"advice {ids['tags']}", "is damaged (tags is 5",
                   f"evotui advice rm {ids['tags']}")
    r = invoke("advice", "rm", ids["tags"])
    assert r.exit_code == 0 and "removed" in r.output
    assert ids["tags"] not in json.loads((home / "advice.json").read_text())["advice"]


@pytest.mark.parametrize("item, why", [
    ({"text": "fine", "counters": [1]}, "counters is [1]"),
    ({"text": 5}, "text is 5"),
    ({"text": "fine", "tags": 5}, "tags is 5"),
    ({"text": "fine", "gain": "abc"}, "gain is 'abc'"),
    ({"text": "fine", "status": "weird"}, "status is 'weird'"),
])
def test_import_of_a_bad_record_exit_2_and_imports_nothing(home, tmp_path, item, why):
    before = len(AdviceStore())
    file = tmp_path / "in.json"
    file.write_text(json.dumps({"advice": [{"text": "a good one"}, item]}))
    r = invoke("advice", "import", str(file))
    assert r.exit_code == 2
    one_line_error(r.output, "advice #2 in the file is not valid", why)
    assert len(AdviceStore()) == before


# ---- 5. options --resume would ignore ----------------------------------------------------------

@pytest.mark.parametrize("extra, names", [
    (("--out", "elsewhere"), "--out"),
    (("--seed", str(ROW_SUM / "seed.py")), "--seed"),
    (("--random-seed", "3"), "--random-seed"),
    (("--out", "x", "--random-seed", "3"), "--out, --random-seed"),
])
def test_resume_refuses_options_it_would_ignore(home, tmp_path, extra, names):
    run = _run_dir(tmp_path / "run")
    r = invoke("run", "--resume", str(run), "--headless", *extra)
    assert r.exit_code == 2
    one_line_error(r.output, f"{names} cannot be combined with --resume")


# ---- 6. a malformed --scheduler -------------------------------------------------------------

def test_a_malformed_scheduler_address_exit_2(home, tmp_path):
    pytest.importorskip("distributed")
    p = evotui("run", str(ROW_SUM), "--headless", "--device", "cpu", "--mutator", "param",
               "--out", str(tmp_path / "run"), "--scheduler", "notanaddress", home=home)
    assert p.returncode == 2
    one_line_error(p.stderr, "--scheduler 'notanaddress' is not a scheduler address",
                   "tcp://host:8786")


# ---- 7. an unusable EVOTUI_HOME -------------------------------------------------------------

def test_an_unusable_evotui_home_exit_2(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    for bad in (blocker, blocker / "sub"):
        p = evotui("run", str(ROW_SUM), "--headless", "--device", "cpu", "--mutator", "param",
                   home=bad)
        assert p.returncode == 2
        one_line_error(p.stderr, f"EVOTUI_HOME={bad} is not a writable directory", "--out")
    p = evotui("ab", str(ROW_SUM), "--device", "cpu", home=blocker)
    assert p.returncode == 2
    one_line_error(p.stderr, f"EVOTUI_HOME={blocker} is not a writable directory")
    p = evotui("advice", "list", home=blocker)
    assert p.returncode == 2
    one_line_error(p.stderr, f"EVOTUI_HOME={blocker} is not a writable directory")
