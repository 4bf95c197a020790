"""The cold-start pack says nothing the prompt rules forbid: the model reads both."""

from __future__ import annotations

import re

import pytest

from evotui.memory.coldstart import load_pack
from tests.conftest import ROOT

RULES = (ROOT / "evotui/dialects/triton/prompts/tunables.md").read_text()
SYSTEM = (ROOT / "evotui/dialects/triton/prompts/system.md").read_text()
TEXTS = [a.text for a in load_pack()]


def test_the_rules_say_what_the_pack_is_checked_against():
    assert "prefer constants like these\nover `@triton.autotune`" in RULES
    assert "`torch.cuda`" in SYSTEM and "mask every load and store" in " ".join(SYSTEM.split())


@pytest.mark.parametrize("text", TEXTS, ids=[t[:30] for t in TEXTS])
def test_no_piece_contradicts_the_rules(text):
    assert not re.search(r"\buse @triton\.autotune\b", text, re.I), "the rules prefer constants"
    assert not re.search(r"one program per SM\b", text), "needs torch.cuda, which is forbidden"
    assert not re.search(r"\bdrop (load )?masks\b", text, re.I), "other shapes are checked"
    for forbidden in ("torch.cuda.", ".cuda()", "data_ptr", "do_bench", "CUDA graph"):
        assert forbidden not in text


def test_tunables_are_advised_the_way_the_rules_ask():
    (piece,) = [t for t in TEXTS if "autotune" in t]
    assert "TUNABLES" in piece and "not inside @triton.autotune" in piece
