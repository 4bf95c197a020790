"""bench/bench_gate.py: the gate's scheduling modelled with the real gate, on any machine."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT


def _bench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(ROOT / "bench" / "bench_gate.py"), *args],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_the_model_prints_a_rate_and_how_the_device_was_held():
    # a hundredth of real time: 20 simulated seconds of two lanes take a fraction of a second
    done = _bench("--lanes", "2", "--seconds", "20", "--scale", "0.01",
                  "--phases", "softmax-h200", "--set", "warm=0.5")
    assert done.returncode == 0, done.stderr
    line = done.stdout.strip()
    assert line.startswith("softmax-h200  2 lanes:"), line
    rate = float(line.split(":")[1].split()[0])
    assert 5 < rate < 120, line  # each lane needs ~2.9 simulated s a candidate
    assert "'alone'" in line and "'draining'" in line


def test_a_phase_it_does_not_know_is_refused_in_one_line():
    done = _bench("--set", "compile=1")
    assert done.returncode == 2
    assert "PHASE=SECONDS" in done.stderr and "Traceback" not in done.stderr
