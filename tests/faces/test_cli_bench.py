"""`evotui bench` as scripts use it: exit codes, the JSON last line, one-line task errors."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.conftest import CANDIDATES, SAMPLES


def bench(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "evotui", "bench", *args], capture_output=True,
                          text=True, timeout=timeout)


def test_accepted_seed_exits_0_with_json_last_line():
    p = bench(str(SAMPLES / "softmax"), str(SAMPLES / "softmax" / "seed.py"), "--device", "cpu", "--json")
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout.strip().splitlines()[-1])
    assert report["accepted"] is True and report["reason"] == "accepted"
    assert report["interpreter"] is True and report["speedup_eager"] is None


def test_rejected_candidate_exits_1_and_names_the_reason():
    p = bench(str(SAMPLES / "softmax"), str(CANDIDATES / "softmax" / "cheat_torch_fallback.py"),
              "--device", "cpu", "--json")
    assert p.returncode == 1
    report = json.loads(p.stdout.strip().splitlines()[-1])
    assert report["accepted"] is False and report["reason"] == "torch_fallback"
    assert "aten::_softmax" in report["message"]


def test_readable_table_by_default():
    p = bench(str(SAMPLES / "softmax"), str(CANDIDATES / "softmax" / "cheat_wrong.py"), "--device", "cpu")
    assert p.returncode == 1
    assert "rejected" in p.stdout and "mismatch" in p.stdout


def test_bad_task_files_give_one_line_and_exit_2(tmp_path):
    cases = {
        "syntax.py": "def get_inputs(:\n",
        "missing.py": "import torch\nclass Model(torch.nn.Module):\n    pass\n",
        "importerr.py": "import not_a_module_anywhere\n",
    }
    seed = str(SAMPLES / "softmax" / "seed.py")
    for name, text in cases.items():
        f = tmp_path / name
        f.write_text(text)
        p = bench(str(f), seed, "--device", "cpu")
        assert p.returncode == 2, (name, p.stdout, p.stderr)
        assert "Traceback" not in p.stderr
        assert len(p.stderr.strip().splitlines()) == 1, p.stderr
    p = bench(str(tmp_path / "nope.py"), seed, "--device", "cpu")
    assert p.returncode == 2 and "task not found" in p.stderr


def test_missing_candidate_is_a_usage_error():
    p = bench(str(SAMPLES / "softmax"), "/nonexistent/cand.py", "--device", "cpu")
    assert p.returncode == 2 and "Traceback" not in p.stderr


TASK_BODY = """import torch
import torch.nn as nn
N = 64


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, -1)


def get_inputs():
{inputs}


def get_init_inputs():
    return []
"""


def test_a_task_whose_own_code_fails_is_a_task_error_not_a_rejection(tmp_path):
    """get_inputs or the reference raising is the user's to fix: exit 2 with the task's
    error (and with --json a last line saying so), before any candidate runs."""
    seed = str(SAMPLES / "softmax" / "seed.py")
    for name, inputs in {"inputs_raise.py": "    raise ValueError('boom in get_inputs')",
                         "not_a_list.py": "    return 3"}.items():
        (tmp_path / name).write_text(TASK_BODY.format(inputs=inputs))
        p = bench(str(tmp_path / name), seed, "--device", "cpu", "--json")
        assert p.returncode == 2, (name, p.stdout, p.stderr)
        assert "Traceback" not in p.stderr
        report = json.loads(p.stdout.strip().splitlines()[-1])
        assert (report["accepted"], report["reason"]) == (False, "task_error")
    p = bench(str(tmp_path / "inputs_raise.py"), seed, "--device", "cpu")
    assert "get_inputs() raised ValueError: boom in get_inputs" in p.stderr


def test_a_task_too_big_for_the_cpu_interpreter_says_so_at_once(tmp_path):
    """A plain KernelBench task (no small CPU shapes) would time out on the seed."""
    (tmp_path / "big.py").write_text(TASK_BODY.format(
        inputs="    return [torch.randn(8192, 8192)]"))
    p = bench(str(tmp_path / "big.py"), str(SAMPLES / "softmax" / "seed.py"), "--device", "cpu",
              timeout=120)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "256 MB" in p.stderr and "cpu_shapes" in p.stderr


def test_unreadable_text_and_a_nan_timeout_are_usage_errors(tmp_path):
    binary = tmp_path / "binary.py"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    seed = str(SAMPLES / "softmax" / "seed.py")
    for args in ((str(SAMPLES / "softmax"), str(binary)), (str(binary), seed),
                 (str(SAMPLES / "softmax"), seed, "--timeout", "nan")):
        p = bench(*args, "--device", "cpu")
        assert p.returncode == 2, (args, p.stderr)
        assert "Traceback" not in p.stderr and p.stderr.strip(), (args, p.stderr)


def test_ctrl_c_is_no_verdict(tmp_path):
    """Interrupted, bench exits 130 (1 would read as "rejected") and leaves no worker."""
    import signal
    import time

    cand = tmp_path / "spin.py"
    cand.write_text("import torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"
                    "    def forward(self, x):\n        while True:\n            pass\n")
    p = subprocess.Popen([sys.executable, "-m", "evotui", "bench", str(SAMPLES / "softmax"),
                          str(cand), "--device", "cpu", "--json"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(8)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode == 130, (out, err)
    assert "interrupted" in err and "Traceback" not in err
