"""``evotui TASK`` opens the TUI (``evotui run TASK``), the other commands still answer, and
without a terminal the TUI's entry point declines and the command runs headless."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

import evotui.headless
import evotui.tui.launch
from evotui.cli.main import main
from evotui.engine.session import RunOptions
from tests.conftest import SAMPLES


def test_a_bare_task_opens_the_tui_with_the_options_of_run(monkeypatch):
    seen: list[RunOptions] = []
    monkeypatch.setattr(evotui.tui.launch, "run_tui", lambda o: seen.append(o) or 0)
    task = str(SAMPLES / "softmax")
    r = CliRunner().invoke(main, [task, "--device", "cpu", "--mutator", "param",
                                  "--iterations", "3"])
    assert r.exit_code == 0, r.output
    assert seen[0].task == task and seen[0].device == "cpu" and seen[0].iterations == 3
    r = CliRunner().invoke(main, ["--device", "cpu", task])  # options first work too
    assert r.exit_code == 0 and seen[1].task == task
    r = CliRunner().invoke(main, ["run", task, "--mutator", "param"])  # run without --headless
    assert r.exit_code == 0 and seen[2].mutator == "param"


def test_the_other_commands_still_answer(tmp_path, monkeypatch):
    monkeypatch.setenv("EVOTUI_HOME", str(tmp_path))
    runner = CliRunner()
    r = runner.invoke(main, ["--help"])
    assert r.exit_code == 0 and "evotui TASK" in r.output
    for cmd in ("run", "bench", "advice", "doctor"):
        assert cmd in r.output
        assert runner.invoke(main, [cmd, "--help"]).exit_code == 0
    assert runner.invoke(main, ["advice", "list"]).exit_code == 0


def test_without_a_terminal_the_tui_declines_and_the_run_goes_headless(monkeypatch):
    opts = RunOptions(task=str(SAMPLES / "softmax"))
    with pytest.raises(evotui.tui.launch.NotATerminal):  # pytest's stdin is not a terminal
        evotui.tui.launch.run_tui(opts)
    calls: list[RunOptions] = []
    monkeypatch.setattr(evotui.headless, "run", lambda o: calls.append(o) or 0)
    r = CliRunner().invoke(main, ["run", opts.task or "", "--device", "cpu"])
    assert r.exit_code == 0, r.output
    assert [c.task for c in calls] == [opts.task] and "running headless" in r.output
