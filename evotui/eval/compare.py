"""An output against the reference, element by element, in float64: a bounded slice at a
time, so that the judge needs the same few hundred MB for a 6 GB output as for a small one
(whole-tensor float64 temporaries took ~100 GB of an H200 for KernelBench's element-wise
shapes, 4096 × 393216 fp32)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from evotui.eval.op_policy import as_bits

CHUNK_ELEMENTS = 1 << 24  # 128 MB per float64 temporary


@dataclass
class FloatComparison:
    elements: int = 0
    max_abs_err: float = 0.0
    max_rel_err: float = 0.0
    nonfinite: int = 0  # NaN or Inf where the reference is finite
    unwritten: int = 0  # of those, still the poison every output starts as (all bits set)
    beyond: int = 0  # finite elements beyond atol + rtol·|ref|
    worst: list[tuple[float, int]] = field(default_factory=list)  # (excess, flat index)


def compare_float(torch: Any, got: Any, ref: Any, atol: float, rtol: float, *,
                  chunk: int = CHUNK_ELEMENTS, keep: int = 3) -> FloatComparison:
    """``got`` against ``ref`` (same shape and dtype): the errors, the counts of bad
    elements and the ``keep`` elements furthest beyond tolerance."""
    g_all, r_all = got.reshape(-1), ref.reshape(-1)
    out = FloatComparison(elements=g_all.numel())
    for start in range(0, out.elements, chunk):
        g_raw, r_raw = g_all[start:start + chunk], r_all[start:start + chunk]
        ref_finite = torch.isfinite(r_raw)
        bad = ~torch.isfinite(g_raw) & ref_finite
        n_bad = int(bad.sum())
        if n_bad:
            out.nonfinite += n_bad
            out.unwritten += int((as_bits(g_raw)[bad] == -1).sum())
            continue
        g, r = g_raw.double(), r_raw.double()
        diff = torch.where(ref_finite, (g - r).abs(), 0.0)
        limit = atol + rtol * r.abs()
        excess = torch.where(ref_finite, diff - limit, -1.0)
        out.max_abs_err = max(out.max_abs_err, float(diff.max()))
        rel = torch.where(ref_finite, diff / r.abs().clamp_min(1e-12), 0.0)
        out.max_rel_err = max(out.max_rel_err, float(rel.max()))
        over = excess > 0
        n_over = int(over.sum())
        if n_over:
            out.beyond += n_over
            top = torch.topk(excess, min(keep, excess.numel()))
            out.worst.extend((float(v), start + int(i))
                             for v, i in zip(top.values.tolist(), top.indices.tolist(), strict=True)
                             if v > 0)
            out.worst = sorted(out.worst, reverse=True)[:keep]
    return out


def describe_worst(got: Any, ref: Any, worst: list[tuple[float, int]]) -> str:
    """The elements furthest beyond tolerance, with their indices: what a model needs to see
    where its kernel goes wrong (an edge, a stride, one row)."""
    shape = tuple(got.shape)
    g_all, r_all = got.reshape(-1), ref.reshape(-1)
    items = []
    for _, i in worst:
        index, rest = [], i
        for size in reversed(shape):
            index.append(rest % size)
            rest //= size
        where = ", ".join(map(str, reversed(index)))
        items.append(f"[{where}] got {float(g_all[i]):.6g}, expected {float(r_all[i]):.6g}")
    return "; ".join(items)
