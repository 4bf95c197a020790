"""``evotui advice``: the CLI contract (DESIGN §3) and its exit codes."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from evotui.cli.main import main
from evotui.memory import AdviceStore


@pytest.fixture
def run(tmp_path, monkeypatch):
    monkeypatch.setenv("EVOTUI_HOME", str(tmp_path))
    monkeypatch.setenv("COLUMNS", "160")
    runner = CliRunner()

    def invoke(*args: str, input: str | None = None):
        return runner.invoke(main, ["advice", *args], input=input, catch_exceptions=False)

    return invoke


def _add(run, text: str, *opts: str) -> str:
    r = run("add", text, *opts)
    assert r.exit_code == 0, r.output
    return r.output.strip().splitlines()[-1]


def test_add_prints_the_id_last_and_show_has_win_rate_and_provenance(run):
    new_id = _add(run, "Use num_warps 8 for 8192-wide rows", "--kind", "softmax", "--tags",
                  "num_warps,row-wise", "--arch", "H200")
    assert len(new_id) == 8
    a = AdviceStore().get(new_id)
    assert (a.kind, a.tags, a.arch, a.status) == ("softmax", ("num_warps", "row-wise"), "sm_90",
                                                  "authored")
    AdviceStore().record_outcome([new_id], True)
    r = run("show", new_id)
    assert r.exit_code == 0 and "1 of 1 children improved (100 %)" in r.output
    assert "authored" in r.output and "provenance 1" in r.output
    assert json.loads(run("show", new_id, "--json").output)["id"] == new_id
    assert _add(run, "use num_warps 8 for 8192-wide rows") == new_id  # same text: same id


def test_list_json_accept_veto_rm(run):
    new_id = _add(run, "Try the online softmax", "--kind", "softmax")
    items = json.loads(run("list", "--json").output)
    assert new_id in {d["id"] for d in items} and len(items) > 25  # with the cold-start pack
    assert run("accept", new_id).exit_code == 0
    assert AdviceStore().get(new_id).status == "accepted"
    assert run("veto", new_id).exit_code == 0
    assert AdviceStore().get(new_id).status == "vetoed"
    assert json.loads(run("list", "--json", "--status", "vetoed").output)[0]["id"] == new_id
    assert "Try the online softmax" in run("list").output
    assert run("rm", new_id).exit_code == 0
    assert new_id not in AdviceStore()


@pytest.mark.parametrize("cmd", [["show"], ["accept"], ["veto"], ["rm"], ["edit", "--text", "x"]])
def test_unknown_id_is_one_line_and_exit_2(run, cmd):
    r = run(*cmd[:1], "zzzzzzzz", *cmd[1:])
    assert r.exit_code == 2
    assert r.output.strip().count("\n") == 0 and r.output.startswith("error: no advice")


def test_edit_with_options_and_with_the_editor(run, monkeypatch):
    new_id = _add(run, "Use more warps", "--tags", "warps")
    assert run("edit", new_id, "--text", "Use num_warps 8 for wide rows", "--tags",
               "num_warps,rows").exit_code == 0
    a = AdviceStore().get(new_id)
    assert a.text == "Use num_warps 8 for wide rows" and a.tags == ("num_warps", "rows")

    seen = {}

    def fake_edit(text, **kw):
        seen["text"] = text
        return text.replace("Use num_warps 8 for wide rows", "Use num_warps 16 for very wide rows")

    monkeypatch.setattr("click.edit", fake_edit)
    r = run("edit", new_id)
    assert r.exit_code == 0, r.output
    assert "text: Use num_warps 8" in seen["text"]
    assert AdviceStore().get(new_id).text == "Use num_warps 16 for very wide rows"
    monkeypatch.setattr("click.edit", lambda text, **kw: None)
    assert "no change" in run("edit", new_id).output


def test_export_import_and_audit(run, tmp_path, monkeypatch):
    new_id = _add(run, "Fuse the bias into the epilogue", "--kind", "gemm")
    out = tmp_path / "shared.json"
    r = run("export", str(out))
    assert r.exit_code == 0 and out.exists()
    monkeypatch.setenv("EVOTUI_HOME", str(tmp_path / "other"))
    r = run("import", str(out))
    assert r.exit_code == 0 and "1 added" in r.output
    r = run("import", str(out))
    assert "0 added, 0 merged" in r.output
    assert AdviceStore().get(new_id).text == "Fuse the bias into the epilogue"
    r = run("audit")
    assert r.exit_code == 0 and "no_tags" in r.output and f"evotui advice edit {new_id}" in r.output
    findings = json.loads(run("audit", "--json").output)
    assert {"code", "advice_id", "message", "fix"} <= set(findings[0])


def test_bad_import_file_and_corrupt_library_exit_2(run, tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    r = run("import", str(bad))
    assert r.exit_code == 2 and "not JSON" in r.output
    r = run("import", str(tmp_path / "missing.json"))
    assert r.exit_code == 2
    (tmp_path / "advice.json").write_text("garbage")
    r = run("list")
    assert r.exit_code == 2 and "damaged" in r.output and "corrupt-" in r.output
    assert list(tmp_path.glob("advice.json.corrupt-*"))


def test_merge_command(run):
    a = _add(run, "Fuse the bias add into the matmul epilogue", "--kind", "gemm")
    b = _add(run, "Fuse the bias add into the matmul epilogue kernel", "--kind", "gemm")
    AdviceStore().record_outcome([a, b], True)
    r = run("merge", a, b)
    assert r.exit_code == 0
    got = AdviceStore().get(a)
    assert got.shown == 2 and b not in AdviceStore()
