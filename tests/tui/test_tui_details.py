"""The candidate details summary: the figures a kernel engineer checks first."""

from __future__ import annotations

from rich.console import Console

from evotui.core.metrics import Metrics
from evotui.tui.controller import CandidateInfo
from evotui.tui.screens.details import summary
from evotui.tui.views import CandidateRow


def _text(table) -> str:
    console = Console(width=120, record=True)
    console.print(table)
    return console.export_text()


def test_gpu_figures_timing_method_and_lineage_are_shown():
    row = CandidateRow(id="c0007", order=7, status="accepted", mutator="param",
                       description="NUM_WARPS 4→8",
                       metrics=Metrics(time_ms=0.0388, spread_pct=0.4, speedup_eager=11.8,
                                       speedup_compile=1.08, roofline_pct=81.0, wall_s=0.7))
    info = CandidateInfo("c0007", "src", "accepted", "c0001",
                         metrics=Metrics(copy_pct=93.2, timing_method="coarse"),
                         lineage=("c0001", "c0007"))
    text = _text(summary(row, info))
    assert "11.80× vs eager, 1.08× vs torch.compile" in text
    assert "93 % of a plain copy of the same bytes" in text
    assert "coarse (a clear loser: a few samples)" in text
    assert "c0001 → c0007" in text


def test_interpreter_rows_show_no_speed_figures():
    row = CandidateRow(id="c0002", order=2, status="accepted", mutator="param",
                       metrics=Metrics(time_ms=26.4, interpreter=True, wall_s=3.0))
    text = _text(summary(row, CandidateInfo("c0002", "src", "accepted")))
    assert "not kernel speed" in text and "vs eager" not in text and "plain copy" not in text
