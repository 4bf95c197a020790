"""extract_program on answers small models really give, each with what a user expects.

Every case is built from ``PARENT`` (tests/messy_replies.py) or a variant of it: a diff-shaped
answer refers to its real lines. Where two readings of an answer are possible the expected
outcome is a rejection that says so, never a silent pick.
"""

from __future__ import annotations

import random

import pytest

from evotui.engine.patch import extract_program
from tests.messy_replies import PARENT, messy_replies

pytestmark = pytest.mark.timeout(60)

FEWER = PARENT.replace("NUM_WARPS = 8", "NUM_WARPS = 4")
EXP2 = PARENT.replace("e = tl.exp(x)", "e = tl.exp2(x)")
BOTH = FEWER.replace("e = tl.exp(x)", "e = tl.exp2(x)")
# the parent with a second kernel whose first lines repeat the first kernel's
TWO_KERNELS = PARENT.replace(
    "\n\nclass ModelNew",
    "\n\n@triton.jit\ndef copy_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):\n"
    "    row = tl.program_id(0)\n    cols = tl.arange(0, BLOCK)\n    mask = cols < n_cols\n"
    "    x = tl.load(x_ptr + row * stride_x + cols, mask=mask)\n"
    "    tl.store(y_ptr + row * stride_y + cols, x, mask=mask)\n\n\nclass ModelNew",
)


def sr(search: str, replace: str) -> str:
    return f"<<<<<<< SEARCH\n{search}\n=======\n{replace}\n>>>>>>> REPLACE\n"


def ok(reply: str, parent: str = PARENT, mode: str | None = None) -> str:
    result = extract_program(reply, parent)
    assert result.ok and result.error is None, result.error
    if mode is not None:
        assert result.mode == mode
    compile(result.source, "child", "exec")
    return result.source


def rejected(reply: str, parent: str = PARENT) -> str:
    result = extract_program(reply, parent)
    assert not result.ok and result.source is None, result.source
    return result.error


# -- line endings, whitespace, look-alike characters ----------------------------------------


def test_crlf_search_replace_on_an_lf_parent():
    child = ok(sr("NUM_WARPS = 8", "NUM_WARPS = 4").replace("\n", "\r\n"), mode="diff")
    assert child == FEWER


def test_search_replace_on_a_crlf_parent():
    assert ok(sr("NUM_WARPS = 8", "NUM_WARPS = 4"), PARENT.replace("\n", "\r\n")) == FEWER


def test_search_with_trailing_whitespace_and_wrong_indentation():
    reply = sr("    e = tl.exp(x)   \t", "    e = tl.exp2(x)")
    assert ok(reply) == EXP2
    reply = sr("e = tl.exp(x)\ny = e / tl.sum(e, axis=0)", "e = tl.exp2(x)\ny = e / tl.sum(e, axis=0)")
    assert ok(reply) == EXP2


def test_spaces_in_search_on_a_tab_indented_parent_keep_tabs():
    parent = PARENT.replace("    ", "\t")
    child = ok(sr("    e = tl.exp(x)", "    e = tl.exp2(x)\n    e = e * 1.0"), parent)
    assert "\te = tl.exp2(x)\n\te = e * 1.0\n" in child


def test_non_breaking_spaces_in_a_full_program_are_plain_spaces():
    child = ok(f"```python\n{FEWER.replace('    ', chr(0xA0) * 4)}```", mode="full")
    assert child == FEWER


def test_non_breaking_space_inside_a_search_line():
    assert ok(sr("    e\u00a0= tl.exp(x)", "    e = tl.exp2(x)")) == EXP2


def test_smart_quotes_around_a_string_in_a_full_program():
    child = ok(f"```python\n{FEWER.replace(chr(34) + 'inf' + chr(34), '“inf”')}```")
    assert child == FEWER


def test_smart_quotes_in_search_and_replace():
    line = '    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=-float("inf"))'
    reply = sr(line.replace('"inf"', "“inf”"), line.replace('"inf"', "“-inf”").replace("-float", "float"))
    assert 'other=float("-inf"))' in ok(reply)


def test_smart_quotes_inside_a_string_literal_are_kept():
    child = ok(f"```python\n{FEWER.replace('Naive Triton softmax', 'A “naive” softmax')}```")
    assert "A “naive” softmax" in child


# -- SEARCH/REPLACE markers and blocks ----------------------------------------------------


@pytest.mark.parametrize("search, divider, replace", [
    ("<<< SEARCH", "===", ">>> REPLACE"),
    ("<<<< SEARCH", "====", ">>>> REPLACE"),
    ("<<<<<< SEARCH", "========", ">>>>>>>> REPLACE"),
    ("<<<<<<< SEARCH:", "=======", ">>>>>>> REPLACE:"),
    ("  <<<<<<<   search  ", " ======= ", "  >>>>>>> replace"),
    ("<<<<<<< ORIGINAL", "=======", ">>>>>>> UPDATED"),
])
def test_miscounted_and_decorated_markers(search, divider, replace):
    reply = f"```python\n{search}\nNUM_WARPS = 8\n{divider}\nNUM_WARPS = 4\n{replace}\n```"
    assert ok(reply, mode="diff") == FEWER


def test_empty_replace_deletes_the_lines():
    child = ok("<<<<<<< SEARCH\n        x = x.contiguous()\n=======\n>>>>>>> REPLACE\n")
    assert child == PARENT.replace("        x = x.contiguous()\n", "")


def test_block_whose_search_exists_only_after_the_previous_block():
    reply = (sr("NUM_WARPS = 8", "NUM_WARPS = 4\nMIN_BLOCK = 64")
             + sr("MIN_BLOCK = 64", "MIN_BLOCK = 128"))
    assert ok(reply) == PARENT.replace("NUM_WARPS = 8", "NUM_WARPS = 4\nMIN_BLOCK = 128")


def test_fence_opened_inside_search_and_closed_inside_replace():
    reply = "<<<<<<< SEARCH\n```python\nNUM_WARPS = 8\n=======\nNUM_WARPS = 4\n```\n>>>>>>> REPLACE\n"
    assert ok(reply) == FEWER


def test_search_matching_twice_is_ambiguous():
    error = rejected(sr("    row = tl.program_id(0)\n    cols = tl.arange(0, BLOCK)",
                        "    row = tl.program_id(1)\n    cols = tl.arange(0, BLOCK)"), TWO_KERNELS)
    assert "block 1 of 1 is ambiguous: it matches 2 places" in error


def test_search_matching_twice_after_an_indentation_shift_is_ambiguous():
    error = rejected(sr("row = tl.program_id(0)", "row = tl.program_id(1)"), TWO_KERNELS)
    assert "ambiguous" in error and "'row = tl.program_id(0)'" in error


def test_the_same_block_once_per_place_it_matches_edits_every_place():
    block = sr("    row = tl.program_id(0)", "    row = tl.program_id(0).to(tl.int64)")
    child = ok(block + block, TWO_KERNELS)
    assert child == TWO_KERNELS.replace("tl.program_id(0)", "tl.program_id(0).to(tl.int64)")
    assert "ambiguous" in rejected(block + block + block, TWO_KERNELS)


def test_search_matching_once_next_to_a_similar_line_is_applied():
    child = ok(sr("    x = tl.load(x_ptr + row * stride_x + cols, mask=mask)",
                  "    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0)"), TWO_KERNELS)
    assert child.count("other=0.0") == 1


# -- full programs in fences ------------------------------------------------------------


@pytest.mark.parametrize("open_, close", [
    ("```python3", "```"), ("```py", "```"), ("~~~python", "~~~"), ("```Python title=\"k.py\"", "```"),
    ("````python", "````"),
])
def test_fence_flavours(open_, close):
    assert ok(f"Here:\n{open_}\n{FEWER}{close}\nDone.", mode="full") == FEWER


def test_program_whose_docstring_holds_a_fenced_example():
    program = FEWER.replace("class ModelNew(nn.Module):\n", (
        'class ModelNew(nn.Module):\n    """Row softmax.\n\n    Example:\n    ```\n'
        '    y = ModelNew()(x)\n    ```\n    """\n\n'))
    assert ok(f"Here is the kernel:\n```python\n{program}```\nIt is faster.") == program


def test_fence_indented_in_a_markdown_list():
    indented = "".join("   " + line if line.strip() else line for line in FEWER.splitlines(True))
    assert ok(f"1. Use four warps:\n\n   ```python\n{indented}   ```\n") == FEWER


def test_stray_fence_after_the_program_is_not_a_truncation():
    assert ok(f"```python\n{FEWER}```\n```") == FEWER


def test_unclosed_fence_with_code_is_still_a_truncation():
    error = rejected(f"```python\n{FEWER}```\nEven better:\n```python\n{FEWER[:300]}")
    assert error.startswith("truncated")


def test_a_copy_of_the_parent_after_the_new_program_is_not_the_answer():
    reply = f"Optimized:\n```python\n{FEWER}```\nFor reference, the original:\n```python\n{PARENT}```"
    assert ok(reply) == FEWER


def test_two_new_programs_the_last_wins():
    assert ok(f"First try:\n```python\n{FEWER}```\nBetter:\n```python\n{EXP2}```") == EXP2


def test_model_class_named_only_in_a_comment_is_no_program():
    reply = ("```python\n# replaces class ModelNew\nimport torch\n\n\nclass Model(torch.nn.Module):\n"
             "    def forward(self, x):\n        return x\n```")
    result = extract_program(reply, PARENT)
    assert not result.ok and result.mode == "none" and result.error.startswith("no full program")


def test_a_class_fragment_alone_is_no_program():
    reply = ("Replace the class with:\n```python\nclass ModelNew(nn.Module):\n"
             "    def forward(self, x):\n        return x.softmax(-1)\n```")
    result = extract_program(reply, PARENT)
    assert not result.ok and result.mode == "none" and "no full program" in result.error


def test_a_class_fragment_after_the_full_program_does_not_replace_it():
    reply = (f"```python\n{FEWER}```\nThe key part:\n```python\nclass ModelNew(nn.Module):\n"
             "    pass\n```")
    assert ok(reply) == FEWER


def test_a_program_with_the_kernel_left_out_as_unchanged_is_no_program():
    kernel = FEWER[FEWER.index("@triton.jit"):FEWER.index("class ModelNew")]
    elided = FEWER.replace(kernel, "# ... softmax_kernel unchanged ...\n\n\n")
    result = extract_program(f"```python\n{elided}```", PARENT)
    assert not result.ok and result.mode == "none"
    assert result.error == ("no full program: the code uses `softmax_kernel` but does not "
                            "define it (left out as unchanged?)")


def test_a_program_that_renames_and_rewrites_everything_is_accepted():
    child = FEWER.replace("softmax_kernel", "row_softmax").replace("NUM_WARPS", "WARPS")
    assert ok(f"```python\n{child}```") == child


def test_a_program_that_parses_but_cannot_compile_is_a_syntax_error():
    dedented = FEWER.replace("        return y\n", "return y\n")  # parses: ast accepts it
    error = rejected(f"```python\n{dedented}```")
    assert error.startswith("syntax error: 'return' outside function")


# -- full program and edits together ------------------------------------------------------


def test_parent_repeated_then_search_replace():
    reply = f"Your code:\n```python\n{PARENT}```\nChange:\n" + sr("NUM_WARPS = 8", "NUM_WARPS = 4")
    assert ok(reply, mode="diff") == FEWER


def test_new_program_and_the_same_change_as_search_replace():
    reply = f"```python\n{FEWER}```\nThe change:\n" + sr("NUM_WARPS = 8", "NUM_WARPS = 4")
    assert ok(reply) == FEWER


def test_new_program_with_more_changes_than_its_search_replace_is_ambiguous():
    reply = f"```python\n{BOTH}```\nThe change:\n" + sr("NUM_WARPS = 8", "NUM_WARPS = 4")
    error = rejected(reply)
    assert error.startswith("ambiguous") and "full program" in error


def test_unclosed_think_with_a_draft_block_then_a_final_program_is_ambiguous():
    reply = ("<think>\nMaybe one warp:\n" + sr("NUM_WARPS = 8", "NUM_WARPS = 1")
             + "No, too few.\n\nFinal:\n```python\n" + FEWER + "```")
    assert rejected(reply).startswith("ambiguous")


def test_closed_think_with_a_draft_block_then_a_final_program():
    reply = ("<think>\nMaybe one warp:\n" + sr("NUM_WARPS = 8", "NUM_WARPS = 1")
             + "No.\n</think>\n```python\n" + FEWER + "```")
    assert ok(reply, mode="full") == FEWER


def test_search_replace_and_a_unified_diff_together_are_ambiguous():
    reply = (sr("NUM_WARPS = 8", "NUM_WARPS = 4")
             + "```diff\n@@ -18 +18 @@\n-    e = tl.exp(x)\n+    e = tl.exp2(x)\n```")
    assert "mixes SEARCH/REPLACE blocks and a unified diff" in rejected(reply)


def test_parent_repeated_then_a_unified_diff():
    reply = f"```python\n{PARENT}```\n```diff\n@@ -8 +8 @@\n-NUM_WARPS = 8\n+NUM_WARPS = 4\n```"
    assert ok(reply, mode="diff") == FEWER


def test_new_program_and_a_different_unified_diff_are_ambiguous():
    reply = f"```diff\n@@ -8 +8 @@\n-NUM_WARPS = 8\n+NUM_WARPS = 2\n```\nFull code:\n```python\n{FEWER}```"
    assert rejected(reply).startswith("ambiguous")


def test_new_program_and_the_same_change_as_a_unified_diff():
    reply = f"```diff\n@@ -8 +8 @@\n-NUM_WARPS = 8\n+NUM_WARPS = 4\n```\nFull code:\n```python\n{FEWER}```"
    assert ok(reply) == FEWER


# -- unified diffs ----------------------------------------------------------------------


@pytest.mark.parametrize("header", ["@@ ... @@", "@@", "@@ -8 +8 @@ NUM_WARPS", "@@ -80,1 +80,1 @@"])
def test_hunk_header_forms(header):
    reply = f"```diff\n--- a/seed.py\n+++ b/seed.py\n{header}\n-NUM_WARPS = 8\n+NUM_WARPS = 4\n```"
    assert ok(reply, mode="diff") == FEWER


def test_diff_with_file_headers_and_no_hunk_header():
    reply = "```diff\n--- a/seed.py\n+++ b/seed.py\n-NUM_WARPS = 8\n+NUM_WARPS = 4\n```"
    assert ok(reply, mode="diff") == FEWER


def test_crlf_unified_diff():
    reply = "```diff\n--- a/seed.py\n+++ b/seed.py\n@@ -8 +8 @@\n-NUM_WARPS = 8\n+NUM_WARPS = 4\n```"
    assert ok(reply.replace("\n", "\r\n")) == FEWER


def test_context_line_that_lost_its_space_inside_the_hunk():
    reply = ("```diff\n@@ -6,8 +6,8 @@\n import triton.language as tl\n \n-NUM_WARPS = 8\n+NUM_WARPS = 4\n"
             "\n\n@triton.jit\n-def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):\n"
             "+def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr, S: int = 0):\n```")
    child = ok(reply)  # before: the hunk stopped at @triton.jit and the signature change was lost
    assert child == FEWER.replace("BLOCK: tl.constexpr):", "BLOCK: tl.constexpr, S: int = 0):")


def test_prose_inside_a_diff_fence_does_not_cut_the_hunk_silently():
    reply = ("```diff\n@@ -8 +8 @@\n-NUM_WARPS = 8\n+NUM_WARPS = 4\nand also\n"
             "-    e = tl.exp(x)\n+    e = tl.exp2(x)\n```")
    assert "did not match" in rejected(reply)


def test_prose_at_the_end_of_a_diff_fence():
    reply = "```diff\n@@ -8 +8 @@\n-NUM_WARPS = 8\n+NUM_WARPS = 4\n\nThat is all.\n\n```"
    assert ok(reply) == FEWER


def test_prose_and_a_bullet_list_after_an_unfenced_diff():
    reply = "@@ -8 +8 @@\n-NUM_WARPS = 8\n+NUM_WARPS = 4\nWhy:\n- fewer warps\n- less pressure\n"
    assert ok(reply) == FEWER


def test_hunk_without_line_numbers_matching_twice_is_ambiguous():
    reply = "```diff\n@@ ... @@\n-    row = tl.program_id(0)\n+    row = tl.program_id(1)\n```"
    error = rejected(reply, TWO_KERNELS)
    assert error.startswith("diff hunk 1 of 1 is ambiguous") and "its context starts" in error


def test_hunk_whose_wrong_line_number_is_far_from_both_matches_is_ambiguous():
    reply = "```diff\n@@ -90,1 +90,1 @@\n-    row = tl.program_id(0)\n+    row = tl.program_id(1)\n```"
    assert "ambiguous" in rejected(reply, TWO_KERNELS)


def test_hunk_whose_line_number_points_at_one_match_goes_there():
    second = TWO_KERNELS.split("\n").index("    row = tl.program_id(0)", 14) + 1
    reply = f"```diff\n@@ -{second},1 +{second},1 @@\n-    row = tl.program_id(0)\n+    row = tl.program_id(1)\n```"
    child = ok(reply, TWO_KERNELS)
    assert child.split("\n")[second - 1] == "    row = tl.program_id(1)"
    assert child.count("tl.program_id(0)") == 1


# -- never a traceback ------------------------------------------------------------------


def test_mangled_replies_never_raise():
    """Random cuts and insertions of format tokens into realistic replies: a PatchResult
    every time, and a program that compiles whenever one is returned."""
    replies = [c.reply for c in messy_replies(PARENT)] + [
        f"```python\n{FEWER}```", sr("NUM_WARPS = 8", "NUM_WARPS = 4"),
        "```diff\n--- a/seed.py\n+++ b/seed.py\n@@ -8 +8 @@\n-NUM_WARPS = 8\n+NUM_WARPS = 4\n```"]
    tokens = ["```", "```python\n", "~~~\n", "<<<<<<< SEARCH\n", "=======\n", ">>>>>>> REPLACE\n",
              "<think>", "</think>", "@@ -1 +1 @@\n", "@@\n", "--- a/x\n+++ b/x\n", "\r\n", "\t",
              "\u00a0", "“", "\n", "-", "+", " ", "class ModelNew:\n", "import torch\n", "\x00"]
    rng = random.Random(1234)
    for _ in range(3000):
        reply = rng.choice(replies)
        for _ in range(rng.randint(1, 5)):
            i = rng.randint(0, len(reply))
            op = rng.random()
            if op < 0.5:
                reply = reply[:i] + rng.choice(tokens) + reply[i:]
            elif op < 0.8:
                reply = reply[:i] + reply[i + rng.randint(1, 40) :]
            else:
                reply = reply[:i]
        result = extract_program(reply, PARENT)
        assert result.ok == (result.source is not None) == (result.error is None)
        if result.ok:
            compile(result.source, "child", "exec")
