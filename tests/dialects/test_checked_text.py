"""Triton compiles exactly the text that was checked (DESIGN §4, first layer).

The static rules read a candidate as one text; Triton reads each kernel's source again
through ``inspect`` and ``linecache``, which obey a coding cookie and number lines as Python
does, not as ``str.splitlines`` does, and Triton's CPU interpreter guessed which line starts
a kernel. The cheats here hide ``torch.softmax`` (run with torch's dispatch modes off, so the
op policy sees nothing) in text the rules took for a comment or a string:

- a UTF-7 cookie: ``#+AAo-`` is a comment to the rules and a line break to Triton;
- a form feed or U+2028 in a comment of a class-level kernel: the rules numbered the lines
  one off, and missed a ``def`` line at column 0 in the kernel's last string, which the
  interpreter ran instead of the kernel (its block does not parse once dedented).

Each is refused before it runs (``ambiguous_source``). With the static rules off, the
harness still makes Triton compile the checked text (pinned in ``linecache``; the kernel's
own ``def``, confirmed at launch), so the hidden code never runs. The honest controls: a
file with a BOM and a UTF-8 cookie, and a kernel kept in a class body.
"""

from __future__ import annotations

import codecs
import json
import subprocess
import sys

import pytest

from evotui.eval import EvalRequest
from tests.conftest import CANDIDATES, SAMPLES

_IMPORTS = """import torch
import torch.nn as nn
import triton
import triton.language as tl

"""
_SIGNATURE = "x_ptr, y_ptr, n_rows, n_cols, stride_x, stride_y, BLOCK: tl.constexpr"
# forward's `y` := softmax(forward's `x`), by torch, with the dispatch modes off: one
# expression (no assignment for the interpreter to rewrite, no `+` for UTF-7 to decode)
_HIDDEN = ('(lambda F, m: (m.__enter__(), F.f_locals["y"].copy_(F.f_locals["x"].softmax(-1)), '
           'm.__exit__(None, None, None)))((lambda g: g(g, __import__("sys")._getframe()))'
           '(lambda g, f: f if f.f_code.co_name == "forward" else g(g, f.f_back)), '
           '__import__("torch")._C._DisableTorchDispatch())')
_FORWARD = """
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n_rows, n_cols = x.shape
        y = torch.empty_like(x)
        {kernel}[(n_rows,)](x, y, n_rows, n_cols, x.stride(0), y.stride(0),
                            BLOCK=triton.next_power_of_2(n_cols))
        return y
"""


def utf7_cheat() -> str:
    """As checked (UTF-8): a kernel that copies its input, a comment last. As Triton reads
    the file (UTF-7), the comment ends at `+AAo-` (a line break) and the torch line follows.
    No `+` elsewhere: UTF-7 would decode it."""
    return ("# -*- coding: utf-7 -*-\n" + _IMPORTS + f"""
@triton.jit
def softmax_kernel({_SIGNATURE}):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr - (-(row * stride_x)) - (-cols), mask=mask, other=0.0)
    tl.store(y_ptr - (-(row * stride_y)) - (-cols), x, mask=mask)
    #+AAo-    {_HIDDEN}


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
""" + _FORWARD.format(kernel="softmax_kernel"))


def line_break_cheat(ch: str) -> str:
    """A class-level kernel that copies its input. ``ch`` in its first comment shifts the
    lines the rules read by one, so they miss the last line of the kernel's string: a `def`
    at column 0 with the torch line as its body."""
    return _IMPORTS + f"""

class ModelNew(nn.Module):
    @staticmethod
    @triton.jit
    def softmax_kernel({_SIGNATURE}):
        row = tl.program_id(0)  # one row{ch}per program
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0)
        tl.store(y_ptr + row * stride_y + cols, x, mask=mask)
        \"\"\"notes
def softmax_kernel({_SIGNATURE}): {_HIDDEN}  # \"\"\"
""" + _FORWARD.format(kernel="self.softmax_kernel")


def evaluate(pool, task, source: str, name: str):
    return pool.evaluate(EvalRequest(task=task, source=source, name=name))


def test_utf7_cookie_hiding_torch_in_a_comment_is_refused(cpu_pool, softmax_task):
    source = utf7_cheat()
    assert f"    {_HIDDEN}" in source.encode().decode("utf-7").splitlines()  # code to Triton
    assert f"    #+AAo-    {_HIDDEN}" in source.splitlines()  # a comment to the rules
    result = evaluate(cpu_pool, softmax_task, source, "cheat_utf7_cookie.py")
    assert not result.accepted
    assert result.reason == "ambiguous_source", (result.reason, result.message)
    assert result.message.startswith("line 1:") and "utf-7" in result.message


def test_utf7_cookie_without_static_rules_triton_compiles_the_checked_text(raw_cpu_pool,
                                                                          softmax_task):
    """The kernel Triton runs is the one checked (it copies: a mismatch); the line the cookie
    made code stays a comment."""
    result = evaluate(raw_cpu_pool, softmax_task, utf7_cheat(), "cheat_utf7_cookie.py")
    assert not result.accepted
    assert result.reason == "mismatch", (result.reason, result.message)


@pytest.mark.parametrize("ch", ["\f", "\u2028"], ids=["form_feed", "u2028"])
def test_a_line_break_python_does_not_count_is_refused(cpu_pool, softmax_task, ch):
    result = evaluate(cpu_pool, softmax_task, line_break_cheat(ch), "cheat_line_break.py")
    assert not result.accepted
    assert result.reason == "ambiguous_source", (result.reason, result.message)
    assert result.message.startswith("line 12:") and f"U+{ord(ch):04X}" in result.message


@pytest.mark.parametrize("ch", ["\f", "\u2028"], ids=["form_feed", "u2028"])
def test_a_line_break_without_static_rules_runs_no_other_def(raw_cpu_pool, softmax_task, ch):
    """No guess at which line starts the kernel: its own def (whose text does not parse
    once dedented: a runtime error), never the def in its string."""
    result = evaluate(raw_cpu_pool, softmax_task, line_break_cheat(ch), "cheat_line_break.py")
    assert not result.accepted
    assert result.reason == "runtime_error", (result.reason, result.message)
    assert "indent" in result.message


def test_a_bom_and_a_utf8_cookie_are_accepted_by_bench(tmp_path):
    candidate = tmp_path / "honest_bom_cookie.py"
    candidate.write_bytes(codecs.BOM_UTF8 + b"# -*- coding: utf-8 -*-\n"
                          + (SAMPLES / "softmax" / "seed.py").read_bytes())
    p = subprocess.run([sys.executable, "-m", "evotui", "bench", str(SAMPLES / "softmax"),
                        str(candidate), "--device", "cpu", "--json"],
                       capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, (p.stdout[-2000:], p.stderr[-2000:])
    report = json.loads(p.stdout.strip().splitlines()[-1])
    assert report["accepted"] is True and report["reason"] == "accepted"


@pytest.mark.parametrize("head", ["# coding: utf8\n", "#!/usr/bin/env python\n# coding=UTF-8\n",
                                  "\ufeff", "# vim: set fileencoding=utf_8 :\n"])
def test_utf8_spelled_any_way_is_accepted(cpu_pool, softmax_task, head):
    source = head + (SAMPLES / "softmax" / "seed.py").read_text()
    result = evaluate(cpu_pool, softmax_task, source, "honest_cookie.py")
    assert result.accepted, (result.reason, result.message)


def test_a_kernel_kept_in_a_class_body_is_accepted(cpu_pool, softmax_task):
    """The interpreter now rewrites a kernel from its own def line: class-level kernels
    (indented, behind `@staticmethod`) still run."""
    source = (CANDIDATES / "softmax" / "honest_softmax_staticmethod.py").read_text()
    result = evaluate(cpu_pool, softmax_task, source, "honest_softmax_staticmethod.py")
    assert result.accepted, (result.reason, result.message)


# --- the static refusal, case by case (no evaluation) ---------------------------------------

def check(source: str):
    from evotui.dialects.triton.static_rules import check_source

    return check_source(source)


SEED = (SAMPLES / "softmax" / "seed.py").read_text()


@pytest.mark.parametrize(("head", "line"), [
    ("# -*- coding: utf-7 -*-\n", 1),
    ("# -*- coding: unicode_escape -*-\n", 1),
    ("# coding: raw_unicode_escape\n", 1),
    ("# coding=latin-1\n", 1),
    ("#!/usr/bin/env python\n# -*- coding: utf-7 -*-\n", 2),
    ("\ufeff# -*- coding: utf-7 -*-\n", 1),  # a BOM followed by a different cookie
    ("\ufeff# coding: latin-1\n", 1),
    ("# coding: utf-8-variant\n", 1),  # tokenize would read it as UTF-8; no such codec
    ("# coding: no-such-codec\n", 1),
])
def test_a_cookie_other_than_utf8_is_refused_with_its_line(head, line):
    issue = check(head + SEED)
    assert issue is not None and issue.reason == "ambiguous_source", issue
    assert issue.line == line and "\n" not in issue.message


def test_text_that_is_not_utf8_is_refused_with_its_line():
    data = SEED.encode().replace(b"# the tail repeats", b"# the tail \xff repeats")
    issue = check(data.decode("utf-8", "surrogateescape"))
    assert issue is not None and issue.reason == "ambiguous_source", issue
    assert "0xff" in issue.message
    assert issue.line == 1 + SEED[:SEED.index("# the tail repeats")].count("\n")


@pytest.mark.parametrize("ch", ["\v", "\f", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"])
@pytest.mark.parametrize("where", ["comment", "string", "code"])
def test_every_line_break_python_does_not_count_is_refused(ch, where):
    marker = "    cols = tl.arange(0, BLOCK)\n"
    line = 1 + SEED[:SEED.index(marker)].count("\n")
    text = {"comment": f"    cols = tl.arange(0, BLOCK)  # a{ch}b\n",
            "string": f"    cols = tl.arange(0, BLOCK) if '{ch}' else None\n",
            "code": f"    cols = tl.arange(0, BLOCK){ch}\n"}[where]
    issue = check(SEED.replace(marker, text))
    assert issue is not None and issue.reason == "ambiguous_source", issue
    assert issue.line == line and f"U+{ord(ch):04X}" in issue.message


def test_line_ends_python_counts_and_escapes_pass():
    assert check(SEED) is None
    assert check(SEED.replace("\n", "\r\n")) is None
    assert check(SEED.replace("ROWS_PER_PROGRAM = 1\n", 'ROWS_PER_PROGRAM = 1  # "\\f", "\\u2028"\n')) is None


# --- the launch check on the GPU's JITFunction (built on the CPU: no GPU needed) -------------

def _jit_kernel(tmp_path, source: str, pinned: bool):
    """``source`` checked and loaded as the worker loads it (its text pinned, or not), and
    its kernel as the GPU's ``JITFunction`` builds it; the recorder that approved it, with
    its hook on ``JITFunction.parse``."""
    from triton.runtime import jit

    from evotui.dialects.triton.launch_hooks import LaunchRecorder
    from evotui.dialects.triton.text_rules import decode, pin

    tmp_path.mkdir()
    path = tmp_path / "candidate.py"
    path.write_text(source)
    text = decode(path.read_bytes())
    recorder = LaunchRecorder()
    recorder.approve(str(path), text)
    recorder.texts.hook_gpu_parse(jit)
    if pinned:
        pin(str(path), text)
    namespace = {"__name__": f"checked_text_{tmp_path.name}"}
    exec(compile(text, str(path), "exec"), namespace)
    kernel = namespace.get("softmax_kernel") or namespace["ModelNew"].softmax_kernel
    # under TRITON_INTERPRET=1 `triton.jit` made an InterpretedFunction: the GPU's from its fn
    return recorder, kernel if type(kernel) is jit.JITFunction else jit.JITFunction(kernel.fn)


def test_the_gpu_kernel_text_must_be_the_checked_def(tmp_path):
    from evotui.dialects.triton.checked_texts import KernelSourceMismatch

    recorder, kernel = _jit_kernel(tmp_path / "seed", SEED, pinned=True)
    recorder.check_kernel(kernel)  # the honest seed: Triton's text is the checked def's
    # the file re-read by its cookie (not pinned): Triton's text holds the torch line
    recorder, kernel = _jit_kernel(tmp_path / "utf7", utf7_cheat(), pinned=False)
    assert "_DisableTorchDispatch" in kernel.src
    with pytest.raises(KernelSourceMismatch):
        recorder.check_kernel(kernel)
    with pytest.raises(KernelSourceMismatch):
        kernel.parse()  # where the compiler parses it, too (the hook is installed)
    # pinned, the cookie's reading never reaches Triton
    recorder, kernel = _jit_kernel(tmp_path / "utf7_pinned", utf7_cheat(), pinned=True)
    recorder.check_kernel(kernel)
    # Triton's GPU front end takes the first `def` at column 0: the one in the string
    recorder, kernel = _jit_kernel(tmp_path / "ff", line_break_cheat("\f"), pinned=True)
    assert kernel.src.startswith("def softmax_kernel") and "_DisableTorchDispatch" in kernel.src
    with pytest.raises(KernelSourceMismatch):
        recorder.check_kernel(kernel)
