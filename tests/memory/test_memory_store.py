"""The advice store: durability (atomic writes, kill -9), concurrency, corruption, basics."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from evotui.memory import Advice, AdviceStore, CorruptLibrary, UnknownAdvice
from evotui.memory.coldstart import load_pack

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("EVOTUI_HOME", str(tmp_path))
    return tmp_path


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ, EVOTUI_HOME=str(home), PYTHONPATH=str(ROOT))
    return env


def test_first_open_loads_cold_start_pack_once(home):
    store = AdviceStore()
    pack = load_pack()
    assert len(store) == len(pack) >= 25
    assert {a.source for a in store.all()} == {"cold-start"}
    for a in pack[:3]:
        store.remove(a.id)
    assert len(AdviceStore()) == len(pack) - 3  # not loaded again into a library in use


def test_add_get_update_remove(home):
    store = AdviceStore(cold_start=False)
    a = store.new("Use num_warps 8 for rows wider than 4096", kind="reduction",
                  tags=["num_warps", "Row-Wise"], arch="NVIDIA H200")
    assert len(a.id) == 8 and a.status == "authored" and a.arch == "sm_90"
    assert a.tags == ("num_warps", "row-wise")
    assert AdviceStore().get(a.id) == a  # another instance reads it from disk
    assert store.get(a.id[:5]).id == a.id  # unique prefix
    b = store.update(a.id, text="Use num_warps 8 for rows of 4096 or more")
    assert b.text.endswith("or more") and b.updated >= a.updated
    assert store.accept(a.id).status == "accepted"
    assert store.veto(a.id).status == "vetoed"
    store.remove(a.id)
    with pytest.raises(UnknownAdvice):
        store.get(a.id)


def test_same_text_is_merged_not_repeated(home):
    store = AdviceStore(cold_start=False)
    a = store.new("Use fp32 accumulation for bf16 sums.")
    b = store.new("  use FP32 accumulation for bf16 sums ")
    assert a.id == b.id and len(store) == 1


def test_record_outcome_counts_per_library(home):
    store = AdviceStore(cold_start=False)
    a = store.new("Try BLOCK_SIZE 4096 for 8192-wide rows")
    store.record_outcome([a.id, "deadbeef"], improved=True)  # unknown ids are skipped
    store.record_outcome([a.id], improved=False)
    got = AdviceStore().get(a.id)
    assert (got.shown, got.improved, got.win_rate) == (2, 1, 0.5)
    assert list(got.counters) == [store.library_id]
    assert got.updated == a.updated  # counters are not an edit


def test_file_on_disk_equals_what_the_store_holds(home):
    """The incremental serialiser (only changed documents re-encoded) writes the truth."""
    store = AdviceStore()
    ids = [store.new(f"advice {i} about tiling", tags=["t"]).id for i in range(5)]
    store.record_outcome(ids[:2], True)
    store.update(ids[2], tags=("x", "y"))
    store.accept(ids[3])
    store.remove(ids[4])
    store.merge_into(ids[0], ids[1])
    on_disk = json.loads(store.path.read_text())
    on_disk.pop("_meta")
    fresh = AdviceStore()
    assert {d["id"]: d for d in on_disk["advice"].values()} == {
        a.id: a.to_doc() for a in fresh.all()
    }
    assert {a.id: a for a in fresh.all()} == {a.id: a for a in store.all()}
    merged = fresh.get(ids[0])
    assert merged.shown == 2 and ids[1] not in fresh


def test_changes_by_another_process_are_seen(home):
    store = AdviceStore(cold_start=False)
    store.new("first")
    code = "from evotui.memory import AdviceStore; print(AdviceStore().new('from elsewhere').id)"
    out = subprocess.run([sys.executable, "-c", code], env=_env(home), capture_output=True,
                         text=True, check=True).stdout.split()[-1]
    assert store.get(out).text == "from elsewhere"
    assert len(store) == 2
    store.new("third")  # our write keeps theirs
    assert len(AdviceStore()) == 3


_ADDER = textwrap.dedent("""
    import os, sys, time
    from evotui.memory import AdviceStore
    tag, n, go = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    store = AdviceStore()
    print("ready", flush=True)
    while not os.path.exists(go):  # all three start adding at the same moment
        time.sleep(0.001)
    for i in range(n):
        a = store.new(f"advice {i} from writer {tag}: tile the rows differently", tags=[tag])
        print(a.id, flush=True)
""")


def test_three_processes_adding_at_once_lose_nothing(home):
    AdviceStore()  # the cold-start pack first, so the writers race only on their adds
    go = home / "go"
    procs = [subprocess.Popen([sys.executable, "-c", _ADDER, tag, "40", str(go)], env=_env(home),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for tag in ("a", "b", "c")]
    for p in procs:
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    go.touch()
    printed = []
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        printed += out.split()
    assert len(printed) == 120
    store = AdviceStore()
    assert all(i in store for i in printed)
    assert len(store) == len(load_pack()) + 120
    # they really interleaved: no writer finished before another started
    mine = [a for a in store.all() if a.source == "authored"]
    spans = {t: (min(a.created for a in mine if t in a.tags),
                 max(a.created for a in mine if t in a.tags)) for t in "abc"}
    assert max(s for s, _ in spans.values()) < min(e for _, e in spans.values())


_LOOPER = textwrap.dedent("""
    import itertools
    from evotui.memory import AdviceStore
    store = AdviceStore()
    for i in itertools.count():
        a = store.new(f"looping advice {i}: fuse the epilogue and keep fp32 accumulators")
        print(a.id, flush=True)
""")


def test_kill_minus_9_during_adds_never_loses_a_returned_add(home):
    store = AdviceStore()
    store.import_data([{"text": f"padding advice {i} so that each write takes a while",
                        "tags": ["pad"]} for i in range(1500)])
    rng = random.Random(1234)
    printed: list[str] = []
    for _ in range(6):
        p = subprocess.Popen([sys.executable, "-c", _LOOPER], env=_env(home),
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert p.stdout is not None
        first = p.stdout.readline()  # it is adding now
        time.sleep(rng.uniform(0.0, 0.25))
        os.kill(p.pid, signal.SIGKILL)
        rest = p.stdout.read()
        p.wait()
        lines = (first + rest).decode().split("\n")
        printed += [ln for ln in lines[:-1] if ln]  # the last piece may be a cut-off line
        AdviceStore()  # opens after every kill
    assert len(printed) >= 5
    store = AdviceStore()
    missing = [i for i in printed if i not in store]
    assert not missing
    assert not list(home.glob(".advice.json.*.tmp"))  # leftovers cleaned under the lock


def test_corrupt_file_gives_clear_error_and_keeps_a_backup(home):
    path = home / "advice.json"
    path.write_text('{"_meta":{"gen":"x"}\n,"advice":{\n"a1b2c3d4":{"id":"a1b2c3d4","te')
    damaged = path.read_bytes()
    with pytest.raises(CorruptLibrary) as e:
        AdviceStore()
    msg = str(e.value)
    backups = list(home.glob("advice.json.corrupt-*"))
    assert len(backups) == 1 and backups[0].read_bytes() == damaged
    assert "damaged" in msg and str(backups[0]) in msg
    assert path.read_bytes() == damaged  # nothing was overwritten
    with pytest.raises(CorruptLibrary):
        AdviceStore()
    assert len(list(home.glob("advice.json.corrupt-*"))) == 1  # no pile of copies


def test_a_plain_tinydb_file_is_adopted(home):
    path = home / "advice.json"
    doc = Advice(id="0badc0de", text="Hand-made advice").to_doc()
    path.write_text(json.dumps({"advice": {"0badc0de": doc}}, indent=2))
    store = AdviceStore()
    assert store.get("0badc0de").text == "Hand-made advice"
    assert len(store) == 1  # not seeded: the library was not empty
    store.new("another")
    assert json.loads(path.read_text())["_meta"]["library"] == store.library_id


def test_stale_temp_files_are_removed_on_open(home):
    AdviceStore(cold_start=False)
    stale = home / ".advice.json.999.abcdef.tmp"
    stale.write_text("half a write")
    AdviceStore(cold_start=False)
    assert not stale.exists()
