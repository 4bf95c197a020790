"""Honest but unusual Triton candidates, each the softmax seed (sample_kernels/softmax/seed.py)
plus one change (``seed_patch.patched``), keyed by name: what the static rules and the
harness must let through."""

from __future__ import annotations

from tests.conftest import SAMPLES
from tests.seed_patch import patched

SEED = (SAMPLES / "softmax" / "seed.py").read_text(encoding="utf-8")

DOC = '"""Naive Triton softmax: one program per row, the whole row in one block.\n'
IMPORTS = "import torch\n"
CLASS = "class ModelNew(nn.Module):\n"
INIT = "    def __init__(self):\n        super().__init__()\n"
FORWARD = "    def forward(self, x: torch.Tensor) -> torch.Tensor:\n"
LAUNCH = "        softmax_kernel[grid](x, y, n_rows, n_cols, "


def variant(*changes: tuple[str, str]) -> str:
    return patched(SEED, changes)


SOFTMAX_HONEST = {
    "honest_config_dict": variant(
        (DOC, '"""HONEST: the seed softmax with its launch parameters in a `class Config(dict)`.\n'
              + DOC[3:]),
        ("\n\n" + CLASS, '''

class Config(dict):
    """launch parameters, read like a dict (honest)"""

    def block_for(self, n):
        return triton.next_power_of_2(n)


CFG = Config(num_warps=NUM_WARPS)


''' + CLASS)),
    "honest_exception_subclass": variant(
        ("\n\n" + CLASS, "\n\nclass ShapeError(ValueError):\n    pass\n\n\n" + CLASS),
        (FORWARD, FORWARD + "        if x.dim() != 2:\n"
                            '            raise ShapeError("softmax expects a 2-D input")\n')),
    "honest_forward_reference": variant(
        (CLASS, CLASS + '    def with_warps(self, n: int) -> "ModelNew":\n        return self\n\n')),
    "honest_literal_annotation": variant(
        (IMPORTS, "from typing import Literal\n\n" + IMPORTS),
        (INIT, INIT.replace("(self)", '(self, mode: Literal["row", "tile"] = "row")'))),
    "honest_plain_dataclass": variant(
        (IMPORTS, "from dataclasses import dataclass\n\n" + IMPORTS),
        ("\nNUM_WARPS = 8\n",
         "\n\n@dataclass\nclass Cfg:\n    warps: int = 8\n\n\nNUM_WARPS = Cfg().warps\n")),
    "honest_reinterpret": variant(
        (LAUNCH, LAUNCH.replace("(x, ", "(triton.reinterpret(x, tl.float32), "))),
    "honest_self_time_types": variant(
        (DOC, '"""HONEST: the seed softmax keeping `self.time` (a call counter) and `self.types`.\n'
              + DOC[3:]),
        (INIT, INIT + "        self.time = 0  # call counter, honest bookkeeping\n"
                      "        self.types = (torch.float32,)\n")),
    "honest_shape_tuple": variant(
        ("(x_ptr, y_ptr, n_rows, n_cols, stride_x,", "(x_ptr, y_ptr, shape, stride_x,"),
        ("    cols = tl.arange(0, BLOCK)\n",
         "    cols = tl.arange(0, BLOCK)\n    n_rows = shape[0]\n    n_cols = shape[1]\n"),
        (LAUNCH, LAUNCH.replace("n_rows, n_cols, ", "x.shape, "))),
}
