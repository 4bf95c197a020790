"""The run directory's checkpoints: programs kept once in sources.jsonl, crash tolerance."""

from __future__ import annotations

import json

import pytest

from evotui.core.metrics import Metrics
from evotui.engine.population import Candidate
from evotui.engine.rundir import SOURCES, RunDir, RunDirError, load_checkpoint
from evotui.engine.state import EngineConfig, RunState


def _state(n: int) -> RunState:
    st = RunState.new(EngineConfig())
    for i in range(n):
        st.population.add(Candidate(id=f"c{i:04d}", source=f"PROGRAM = {i}\n" * 50,
                                    mutator="param", status="accepted",
                                    metrics=Metrics(time_ms=1.0 + i)))
    return st


def test_each_program_is_written_once_and_the_checkpoint_refers_to_it(tmp_path):
    rd = RunDir(tmp_path)
    st = _state(3)
    rd.write_checkpoint(st.to_dict(0.0))
    st.population.add(Candidate(id="c0003", source="PROGRAM = 3\n", mutator="param",
                                status="accepted", metrics=Metrics(time_ms=0.5)))
    rd.write_checkpoint(st.to_dict(0.0))
    rd.close()
    lines = [json.loads(x) for x in (tmp_path / SOURCES).read_text().splitlines()]
    assert [x["id"] for x in lines] == ["c0000", "c0001", "c0002", "c0003"]
    assert "PROGRAM = 1" not in (tmp_path / "checkpoint.json").read_text()
    assert st.population.get("c0001").source.startswith("PROGRAM = 1")  # untouched in memory
    back = {c["id"]: c["source"] for c in load_checkpoint(tmp_path)["population"]["candidates"]}
    assert back == {c.id: c.source for c in st.population.candidates()}


def test_a_crash_in_the_middle_of_an_append_loses_nothing_checkpointed(tmp_path):
    rd = RunDir(tmp_path)
    st = _state(2)
    rd.write_checkpoint(st.to_dict(0.0))
    rd.close()
    with open(tmp_path / SOURCES, "a") as f:  # killed while appending the next program
        f.write('{"id": "c0002", "sour')
    assert len(load_checkpoint(tmp_path)["population"]["candidates"]) == 2
    resumed = RunDir(tmp_path, resume=True)  # the resume appends after the last whole line
    st.population.add(Candidate(id="c0002", source="PROGRAM = 2\n", mutator="param",
                                status="accepted", metrics=Metrics(time_ms=0.2)))
    resumed.write_checkpoint(st.to_dict(0.0))
    resumed.close()
    back = {c["id"]: c["source"] for c in load_checkpoint(tmp_path)["population"]["candidates"]}
    assert back["c0002"] == "PROGRAM = 2\n" and len(back) == 3


def test_a_missing_program_is_a_clear_error(tmp_path):
    rd = RunDir(tmp_path)
    rd.write_checkpoint(_state(2).to_dict(0.0))
    rd.close()
    (tmp_path / SOURCES).write_text((tmp_path / SOURCES).read_text().splitlines()[0] + "\n")
    with pytest.raises(RunDirError, match="lacks the program of c0001"):
        load_checkpoint(tmp_path)


def test_programs_of_a_checkpoint_that_never_came_are_dropped_on_resume(tmp_path):
    """A checkpoint attempt appended c0002's program and died before writing the checkpoint;
    the resumed run hands out c0002 again, to another program, which must be the one kept."""
    rd = RunDir(tmp_path)
    st = _state(2)
    rd.write_checkpoint({**st.to_dict(0.0), "seq": 1})
    rd._append_source("c0002", "SESSION-1 PROGRAM\n")  # ... and then kill -9
    rd._sources.flush()
    rd.close()
    ck = load_checkpoint(tmp_path)
    resumed = RunDir(tmp_path, resume=True)
    resumed.truncate_sources(ck["sources_offset"])
    st.population.add(Candidate(id="c0002", source="SESSION-2 PROGRAM\n", mutator="param",
                                status="accepted", metrics=Metrics(time_ms=0.2)))
    resumed.write_checkpoint({**st.to_dict(0.0), "seq": 2})
    resumed.close()
    back = {c["id"]: c["source"] for c in load_checkpoint(tmp_path)["population"]["candidates"]}
    assert back["c0002"] == "SESSION-2 PROGRAM\n"


def test_of_two_overlapping_checkpoint_writes_the_newer_is_kept(tmp_path):
    rd = RunDir(tmp_path)
    newer, older = _state(3), _state(2)
    rd.write_checkpoint({**newer.to_dict(0.0), "seq": 7})  # the final checkpoint
    rd.write_checkpoint({**older.to_dict(0.0), "seq": 6})  # a cancelled write that came late
    rd.close()
    assert len(load_checkpoint(tmp_path)["population"]["candidates"]) == 3
