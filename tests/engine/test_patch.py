"""extract_program on messy small-model answers, strip_think and diff_text."""

from __future__ import annotations

import ast

import pytest

from evotui.engine.patch import PatchResult, diff_text, extract_program, strip_think
from tests.messy_replies import PARENT, MessyCase, messy_replies

pytestmark = pytest.mark.timeout(20)

CASES = messy_replies(PARENT)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_messy_reply(case: MessyCase):
    result = extract_program(case.reply, PARENT)
    assert result.mode == case.mode, result
    if case.error is not None:
        assert result.source is None and not result.ok
        assert result.error is not None and case.error in result.error, result.error
        return
    assert result.error is None and result.ok, result.error
    ast.parse(result.source)
    assert "class ModelNew" in result.source and result.source.endswith("\n")
    assert result.source != PARENT
    for text in case.contains:
        assert text in result.source, f"{text!r} missing from:\n{result.source}"
    for text in case.absent:
        assert text not in result.source
    if case.mode == "diff":
        assert result.applied >= 1
        # a diff only touches what it names: everything else of the parent survives
        assert "def softmax_kernel(x_ptr, y_ptr, n_cols" in result.source


def test_diff_blocks_apply_in_order_on_the_running_result():
    reply = (
        "<<<<<<< SEARCH\nNUM_WARPS = 8\n=======\nNUM_WARPS = 4\n>>>>>>> REPLACE\n"
        "<<<<<<< SEARCH\nNUM_WARPS = 4\n=======\nNUM_WARPS = 2\n>>>>>>> REPLACE\n"
    )
    result = extract_program(reply, PARENT)
    assert result == PatchResult(PARENT.replace("NUM_WARPS = 8", "NUM_WARPS = 2"), "diff", None, 2)


def test_diff_result_is_the_parent_with_only_that_edit():
    reply = (
        "```\n<<<<<<< SEARCH\n    e = tl.exp(x)\n=======\n    e = tl.exp2(x)\n>>>>>>> REPLACE\n```"
    )
    result = extract_program(reply, PARENT)
    assert result.source == PARENT.replace("tl.exp(x)", "tl.exp2(x)")
    assert diff_text(PARENT, result.source).count("\n-") == 1


def test_failed_block_is_named_with_its_first_search_line():
    reply = "<<<<<<< SEARCH\n    z = tl.zeros([BLOCK])\n=======\n    z = 0\n>>>>>>> REPLACE\n"
    result = extract_program(reply, PARENT)
    assert result.source is None and result.mode == "diff"
    assert result.error == (
        "SEARCH/REPLACE block 1 of 1 did not match the parent "
        "(its SEARCH starts with 'z = tl.zeros([BLOCK])')"
    )


def test_inconsistent_indentation_is_not_guessed():
    reply = (
        "<<<<<<< SEARCH\nx = x.contiguous()\n        n_rows, n_cols = x.shape\n=======\n"
        "pass\n>>>>>>> REPLACE\n"
    )
    result = extract_program(reply, PARENT)
    assert result.source is None and "did not match" in result.error


def test_diff_producing_a_syntax_error_is_rejected():
    reply = "<<<<<<< SEARCH\n    e = tl.exp(x)\n=======\n    e = tl.exp(x\n>>>>>>> REPLACE\n"
    result = extract_program(reply, PARENT)
    assert result.source is None and result.error.startswith("syntax error: ")


def test_diff_that_changes_nothing_is_no_change():
    reply = "<<<<<<< SEARCH\nNUM_WARPS = 8\n=======\nNUM_WARPS = 8   \n>>>>>>> REPLACE\n"
    assert extract_program(reply, PARENT).error == "no change"


def test_empty_search_is_rejected():
    reply = "<<<<<<< SEARCH\n\n=======\nimport math\n>>>>>>> REPLACE\n"
    result = extract_program(reply, PARENT)
    assert result.source is None and "empty SEARCH" in result.error


def test_tab_indented_search_matches_space_indented_parent():
    reply = "<<<<<<< SEARCH\n\te = tl.exp(x)\n=======\n\te = tl.exp2(x)\n>>>>>>> REPLACE\n"
    result = extract_program(reply, PARENT)
    assert result.error is None
    assert "    e = tl.exp2(x)\n" in result.source


def test_truncated_program_after_a_complete_one_is_still_truncated():
    good = PARENT.replace("NUM_WARPS = 8", "NUM_WARPS = 4")
    reply = f"```python\n{good}```\nEven better:\n```python\n{good[:200]}"
    result = extract_program(reply, PARENT)
    assert result.source is None and result.error.startswith("truncated")


def test_syntax_error_in_last_block_falls_back_to_an_earlier_complete_program():
    good = PARENT.replace("NUM_WARPS = 8", "NUM_WARPS = 4")
    bad = good.replace("return y", "return y)")
    result = extract_program(f"```python\n{good}```\n```python\n{bad}```", PARENT)
    assert result.source == good


def test_strip_think():
    assert strip_think("<think>a\n```python\nx=1\n```</think>answer") == "answer"
    assert strip_think("<THINKING>a</THINKING>b<think>c</think>d") == "bd"
    assert strip_think("reasoning about code\n</think>\nthe answer") == "\nthe answer"
    assert (
        strip_think("<think>\nstill thinking, then code:\nx = 1")
        == "\nstill thinking, then code:\nx = 1"
    )
    assert strip_think("no tags at all") == "no tags at all"


def test_diff_text():
    child = PARENT.replace("NUM_WARPS = 8", "NUM_WARPS = 4")
    d = diff_text(PARENT, child)
    assert d.startswith("--- parent\n+++ child\n")
    assert "-NUM_WARPS = 8\n+NUM_WARPS = 4\n" in d
    assert diff_text("a", "b", "x.py", "y.py") == "--- x.py\n+++ y.py\n@@ -1 +1 @@\n-a\n+b\n"
    assert diff_text(PARENT, PARENT) == ""


def test_a_hunk_matching_in_two_places_goes_where_its_header_says():
    parent = ("import torch\n\n\ndef first(x):\n    y = x + 1\n    return y\n\n\n"
              "def second(x):\n    y = x + 1\n    return y\n\n\nclass ModelNew:\n    pass\n")
    for line, expect in ((4, "def first(x):\n    y = x + 2"), (10, "def second(x):\n    y = x + 2")):
        reply = f"```diff\n@@ -{line},2 +{line},2 @@\n-    y = x + 1\n+    y = x + 2\n```"
        result = extract_program(reply, parent)
        assert result.ok and result.mode == "diff", result.error
        assert expect in result.source and result.source.count("x + 2") == 1


def test_hunk_headers_count_the_lines_earlier_hunks_added():
    parent = ("import torch\n\n\ndef a(x):\n    y = x + 1\n    return y\n\n\n"
              "def b(x):\n    y = x + 1\n    return y\n\n\nclass ModelNew:\n    pass\n")
    added = "".join(f"+# note {k}\n" for k in range(8))
    reply = ("```diff\n@@ -1,1 +1,9 @@\n import torch\n" + added +
             "@@ -10,1 +18,1 @@\n-    y = x + 1\n+    y = x + 2\n```")
    result = extract_program(reply, parent)
    assert result.ok, result.error
    assert "def b(x):\n    y = x + 2" in result.source and "def a(x):\n    y = x + 1" in result.source


def test_an_unfenced_program_is_whole_or_nothing():
    broken = PARENT.replace("def forward(self, x", "def forward(self x")  # a syntax error
    broken = broken.replace("class ModelNew", "# the module\nclass ModelNew")
    result = extract_program(f"Here it is:\n{broken}\nEnjoy.", PARENT)
    assert not result.ok  # never the tail of the program from a comment on
