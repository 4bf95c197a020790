"""What a candidate can reach from its allowed imports, walked (tests/surface_walk.py): every
chain of attributes and items to something dangerous (a module held as a value, sys.modules,
builtins such as eval or open, os / subprocess / importlib / inspect functions, the import
machinery, frames, file-opening and code-compiling callables) must be refused by the static
rules. When a new torch or triton makes one reachable under a name the rules let through,
this test fails and names the chain, with the candidate lines that bind its first name.

The walk runs in a fresh process set up as the CPU worker is (TRITON_INTERPRET=1), so what
other tests imported does not change what it sees.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Chains the walk reaches that the static rules accept today, by (root, chain) as the walk
# reports them (root: the candidate line binding the chain's first name), each with why it
# is dangerous. Close one in the rules, then drop it here (test_known_gaps_are_still_open
# fails until then, so the list stays true). The walk's first run found twelve (`from A
# import n` judged less strictly than `A.n`, `triton.compile`, `torch.CompilationUnit`,
# `tl.core.ir`): all closed.
KNOWN_GAPS: dict[tuple[str, str], str] = {}

# With a few bans lifted (surface_walk.weaken_rules) the walk must find the escapes they
# close again: else it has gone blind (a rename in torch or triton, a broken reader).
LIFTED_BAN_CHAINS = {
    ("import torch", "torch.PyTorchFileWriter"),
    ("import torch", "torch.PyTorchFileReader"),
    ("import triton", "triton.cdiv.signature"),
    ("own kernel (JITFunction)", "kernel.signature"),
    ("own kernel (JITFunction)", "list(kernel.used_global_vals.values())[0][1]"),
}


@pytest.fixture(scope="module")
def surface() -> dict:
    env = {**os.environ, "TRITON_INTERPRET": "1", "CUDA_VISIBLE_DEVICES": "", "PYTHONHASHSEED": "0"}
    proc = subprocess.run(
        [sys.executable, "-m", "tests.surface_walk", "--weakened"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout)


def _describe(found: list[dict]) -> str:
    return "\n".join(f"  {p['root']}  ->  value = {p['chain']}\n      ({p['why']})" for p in found)


def test_no_new_escapes(surface):
    new = [p for p in surface["passing"] if (p["root"], p["chain"]) not in KNOWN_GAPS]
    assert not new, (
        "the static rules accept chains to dangerous objects (each is the "
        "candidate's import line, then the chain):\n" + _describe(new)
    )


def test_known_gaps_are_still_open(surface):
    found = {(p["root"], p["chain"]) for p in surface["passing"]}
    closed = sorted(set(KNOWN_GAPS) - found)
    assert not closed, f"no longer reached or now refused: drop from KNOWN_GAPS: {closed}"


def test_walk_finds_known_escapes_without_their_bans(surface):
    found = {(p["root"], p["chain"]) for p in surface["weakened_passing"]}
    assert LIFTED_BAN_CHAINS <= found, f"the walk missed: {sorted(LIFTED_BAN_CHAINS - found)}"


def test_walk_covered_the_surface(surface):
    stats = surface["stats"]
    assert not stats["capped"], stats  # MAX_NODES reached: raise it, or the walk is partial
    assert stats["roots"] >= 20 and stats["expanded"] > 2000, stats
