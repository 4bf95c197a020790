"""Realistic messy answers of small local models, for patch-extraction tests and fakes.

``messy_replies(parent_source)`` returns ``MessyCase`` items: a reply text plus what
``evotui.engine.patch.extract_program`` should make of it. The replies are built from the
parent program they answer, so the diff-shaped ones really refer to its lines.
``PARENT`` is a naive Triton softmax candidate to use as that parent.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass

PARENT = '''"""Naive Triton softmax: one program per row, the whole row in one block."""

import torch
import torch.nn as nn
import triton
import triton.language as tl

NUM_WARPS = 8


@triton.jit
def softmax_kernel(x_ptr, y_ptr, n_cols, stride_x, stride_y, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    y = e / tl.sum(e, axis=0)
    tl.store(y_ptr + row * stride_y + cols, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n_rows, n_cols = x.shape
        y = torch.empty_like(x)
        block = triton.next_power_of_2(n_cols)
        softmax_kernel[(n_rows,)](x, y, n_cols, x.stride(0), y.stride(0), BLOCK=block,
                                  num_warps=NUM_WARPS)
        return y
'''


@dataclass(frozen=True)
class MessyCase:
    name: str
    reply: str
    mode: str  # what PatchResult.mode should be
    error: str | None = None  # a substring the error must contain; None: success expected
    contains: tuple[str, ...] = ()  # strings the resulting program must contain
    absent: tuple[str, ...] = ()  # strings it must not contain


def messy_replies(parent_source: str = PARENT) -> list[MessyCase]:
    parent = parent_source.rstrip("\n") + "\n"
    fewer_warps = parent.replace("NUM_WARPS = 8", "NUM_WARPS = 4")
    exp2 = parent.replace("e = tl.exp(x)", "e = tl.exp2(x * 1.4426950408889634)")
    draft = parent.replace("NUM_WARPS = 8", "NUM_WARPS = 2  # draft")
    cut = fewer_warps[: fewer_warps.index("        y = torch.empty_like(x)")]
    forward_lines = "\n".join(
        line
        for line in parent.split("\n")
        if line.startswith("        x = x.contiguous()")
        or line.startswith("        n_rows, n_cols")
    )
    cases = [
        MessyCase(
            "think_with_code_then_full_program",
            "<think>\nThe user wants a faster softmax. Maybe fewer warps? Let me draft:\n"
            f"```python\n{draft}```\nHmm, 2 is too few. Also I could write\n"
            "<<<<<<< SEARCH\nNUM_WARPS = 8\n=======\nNUM_WARPS = 1\n>>>>>>> REPLACE\n"
            "but no. Use 4.\n</think>\n\nSure! Here is the optimized kernel:\n\n"
            f"```python\n{fewer_warps}```\n\nThis reduces register pressure per row.",
            "full",
            contains=("NUM_WARPS = 4",),
            absent=("draft", "NUM_WARPS = 1"),
        ),
        MessyCase(
            "stray_closing_think_tag",
            "Okay so the template opened the think tag for me. ```python\nclass ModelNew: pass\n"
            f"```\n</think>\nFinal answer:\n```py\n{exp2}```\n",
            "full",
            contains=("tl.exp2(x * 1.4426950408889634)",),
        ),
        MessyCase(
            "unclosed_think_then_code",
            "<think>\nI should use exp2, it maps to the fast hardware unit.\n\n"
            f"```python\n{exp2}```\n",
            "full",
            contains=("tl.exp2",),
        ),
        MessyCase(
            "whole_file_in_python_fence_with_prose",
            f"I changed the number of warps.\n\n```python\n{fewer_warps}```\n\nLet me know!",
            "full",
            contains=("NUM_WARPS = 4",),
        ),
        MessyCase(
            "fence_without_language_tag",
            f"Updated program:\n```\n{exp2}```",
            "full",
            contains=("tl.exp2",),
        ),
        MessyCase(
            "two_full_programs_last_wins",
            f"First attempt:\n```python\n{fewer_warps}```\nBetter:\n```python\n{exp2}```\n",
            "full",
            contains=("tl.exp2", "NUM_WARPS = 8"),
        ),
        MessyCase(
            "full_program_then_shell_snippet",
            f"```python\n{fewer_warps}```\nRun it with:\n```bash\npython bench.py\n```\n",
            "full",
            contains=("NUM_WARPS = 4",),
        ),
        MessyCase(
            "bare_program_without_fences",
            fewer_warps,
            "full",
            contains=("NUM_WARPS = 4",),
        ),
        MessyCase(
            "windows_line_endings",
            f"```python\n{fewer_warps}```\n".replace("\n", "\r\n"),
            "full",
            contains=("NUM_WARPS = 4",),
            absent=("\r",),
        ),
        MessyCase(
            "diff_exact_in_fence",
            "Change the warps:\n```python\n<<<<<<< SEARCH\nNUM_WARPS = 8\n=======\n"
            "NUM_WARPS = 4\n>>>>>>> REPLACE\n```\nThat's all.",
            "diff",
            contains=("NUM_WARPS = 4", "def forward"),
        ),
        MessyCase(
            "diff_long_markers_and_trailing_spaces",
            "<<<<<<<<<< SEARCH   \n    e = tl.exp(x)   \n=========  \n"
            "    e = tl.exp2(x * 1.4426950408889634)\n>>>>>>>>>>> REPLACE \n",
            "diff",
            contains=("    e = tl.exp2(x * 1.4426950408889634)\n",),
        ),
        MessyCase(
            "diff_indentation_drift",
            # the model quoted lines of forward() without their 8 spaces of indentation
            "```python\n<<<<<<< SEARCH\n"
            + textwrap.dedent(forward_lines)
            + "\n=======\nx = x.contiguous()\nn_rows, n_cols = x.shape\n"
            "if n_cols > 65536:\n    raise ValueError('row too long')\n>>>>>>> REPLACE\n```\n",
            "diff",
            contains=(
                "        n_rows, n_cols = x.shape\n        if n_cols > 65536:\n"
                "            raise ValueError('row too long')\n",
            ),
        ),
        MessyCase(
            "two_diff_blocks_with_prose_between",
            "First, fewer warps:\n<<<<<<< SEARCH\nNUM_WARPS = 8\n=======\nNUM_WARPS = 4\n"
            ">>>>>>> REPLACE\nThen use exp2:\n```python\n<<<<<<< SEARCH\n"
            "    e = tl.exp(x)\n\n=======\n    e = tl.exp2(x * 1.4426950408889634)\n"
            ">>>>>>> REPLACE\n```",
            "diff",
            contains=("NUM_WARPS = 4", "tl.exp2("),
        ),
        MessyCase(
            "diff_block_that_does_not_match",
            "<<<<<<< SEARCH\nNUM_WARPS = 8\n=======\nNUM_WARPS = 4\n>>>>>>> REPLACE\n"
            "<<<<<<< SEARCH\n    x = x * 2.0\n=======\n    x = x * 3.0\n>>>>>>> REPLACE\n",
            "diff",
            error="block 2 of 2 did not match",
        ),
        MessyCase(
            "truncated_diff_block",
            "<<<<<<< SEARCH\nNUM_WARPS = 8\n=======\nNUM_WA",
            "diff",
            error="truncated",
        ),
        MessyCase(
            "snippet_without_model_class",
            "Just change the kernel like this:\n```python\n@triton.jit\n"
            "def softmax_kernel(x_ptr, y_ptr):\n    pass\n```\n",
            "none",
            error="no full program",
        ),
        MessyCase(
            "wrong_code_syntax_error",
            "```python\n"
            + fewer_warps.replace("def forward(self, x", "def forward(self x")
            + "```",
            "full",
            error="syntax error",
        ),
        MessyCase(
            "no_code_at_all",
            "I think the kernel is already optimal; increasing BLOCK might help, or not.",
            "none",
            error="no code",
        ),
        MessyCase(
            "truncated_full_program",
            f"Here you go:\n```python\n{cut}",
            "full",
            error="truncated",
        ),
        MessyCase(
            "unified_diff_in_a_fence_with_wrong_line_numbers",
            "Change the warps:\n```diff\n--- a/kernel.py\n+++ b/kernel.py\n"
            "@@ -40,7 +40,7 @@ import triton\n import triton.language as tl\n \n"
            "-NUM_WARPS = 8\n+NUM_WARPS = 4\n \n \n@triton.jit\n```\nThat should help.",
            "diff",
            contains=("NUM_WARPS = 4",),
            absent=("NUM_WARPS = 8",),
        ),
        MessyCase(
            "unified_diff_two_hunks_no_fence_context_lost_its_space",
            "@@ -8 +8 @@\n-NUM_WARPS = 8\n+NUM_WARPS = 16\n\n"
            "@@ -17,3 +17,3 @@\n     x = x - tl.max(x, axis=0)\n-    e = tl.exp(x)\n"
            "+    e = tl.exp2(x * 1.4426950408889634)\n     y = e / tl.sum(e, axis=0)\n"
            "\nBoth changes are safe.",
            "diff",
            contains=("NUM_WARPS = 16", "tl.exp2(x * 1.4426950408889634)"),
            absent=("e = tl.exp(x)",),
        ),
        MessyCase(
            "unified_diff_against_lines_the_parent_lacks",
            "```diff\n@@ -1,2 +1,2 @@\n-BLOCK = 1024\n+BLOCK = 2048\n```",
            "diff",
            error="diff hunk 1 of 1 did not match",
        ),
        MessyCase(
            "markdown_heading_prose_unfenced_program_then_done",
            f"# Faster softmax\nThis version uses fewer warps.\n\n{fewer_warps}\nDone",
            "full",
            contains=("NUM_WARPS = 4",),
            absent=("Done",),
        ),
        MessyCase(
            "aider_original_updated_markers",
            "```python\n<<<<<<< ORIGINAL\nNUM_WARPS = 8\n=======\nNUM_WARPS = 2\n"
            ">>>>>>> UPDATED\n```",
            "diff",
            contains=("NUM_WARPS = 2",),
        ),
        MessyCase(
            "unfenced_program_between_prose",
            f"Sure, here is the new version.\n\n{fewer_warps}\nIt uses four warps per row, "
            "which should lower register pressure.\nLet me know!",
            "full",
            contains=("NUM_WARPS = 4",),
        ),
        MessyCase(
            "same_as_parent",
            f"The code is already good:\n```python\n{parent}```",
            "full",
            error="no change",
        ),
    ]
    return cases
