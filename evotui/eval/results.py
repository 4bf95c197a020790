"""What goes into and comes out of the evaluator (the boundary the engine and CLI use)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from evotui.core import reasons
from evotui.core.metrics import Metrics, launch_pairs
from evotui.task.model import TaskRef

if TYPE_CHECKING:
    from evotui.eval.messages import Verdict


@dataclass(frozen=True)
class EvalRequest:
    task: TaskRef
    source: str  # the candidate program
    name: str = "candidate"
    time: bool = True
    trials: int = 5
    timeout_s: float = 120.0
    # a call slower than this on its first estimate is a clear loser: timed with a few
    # samples only (timing method "coarse"); the engine passes a multiple of its best
    slow_cutoff_ms: float | None = None


@dataclass(frozen=True)
class EvalResult:
    accepted: bool
    reason: str  # a stable code from evotui.core.reasons
    message: str  # for humans and for the next prompt
    device: str = "cpu"
    device_name: str = ""
    interpreter: bool = False  # timings from Triton's CPU interpreter are not kernel speed
    time_ms: float | None = None
    spread_pct: float | None = None
    timing_method: str | None = None
    # the median of each input set the timed calls rotated over (placement vs drift)
    set_medians_ms: tuple[float, ...] = ()
    eager_ms: float | None = None
    compile_ms: float | None = None
    speedup_eager: float | None = None
    speedup_compile: float | None = None
    roofline_pct: float | None = None
    # memory-bound tasks: a plain device copy of the same bytes (read + write) vs the candidate,
    # in %: the roofline at this size, launch and tail effects included
    copy_pct: float | None = None
    max_abs_err: float | None = None
    launches: dict[str, int] = field(default_factory=dict)
    wall_s: float = 0.0
    phases: dict[str, float] = field(default_factory=dict)  # seconds: load, trials, timing, ghost, judge
    worker_output_tail: str = ""

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["description"] = reasons.DESCRIPTIONS.get(self.reason, "")
        return d

    @staticmethod
    def from_verdict(verdict: Verdict, common: dict[str, Any], wall_s: float, tail: str,
                     phases: dict[str, float]) -> EvalResult:
        """The judge's verdict as the engine sees it (no speedups from the interpreter)."""
        details, timing = verdict.details, verdict.details.timing
        interpreter = common["interpreter"] or (timing is not None
                                                and timing.method == "interpreter")
        return EvalResult(
            accepted=verdict.accepted,
            reason=verdict.reason,
            message=verdict.message,
            device=common["device"],
            interpreter=interpreter,
            time_ms=None if timing is None else timing.median_ms,
            spread_pct=None if timing is None else timing.spread_pct,
            timing_method=None if timing is None else timing.method,
            set_medians_ms=() if timing is None else timing.set_medians_ms,
            eager_ms=details.eager_ms,
            compile_ms=details.compile_ms,
            speedup_eager=None if interpreter else details.speedup_eager,
            speedup_compile=None if interpreter else details.speedup_compile,
            roofline_pct=None if interpreter else details.roofline_pct,
            copy_pct=None if interpreter else details.copy_pct,
            max_abs_err=details.max_abs_err,
            launches=dict(details.launches),
            wall_s=wall_s,
            worker_output_tail=tail[-1000:],
            phases=phases,
        )

    @staticmethod
    def rejected(reason: str, message: str, **kw: Any) -> EvalResult:
        return EvalResult(accepted=False, reason=reason, message=message, **kw)

    @property
    def metrics(self) -> Metrics:
        """The measured figures as one record: what the engine, its events, the report and
        the TUI hold of this verdict."""
        return Metrics(
            time_ms=self.time_ms, spread_pct=self.spread_pct, timing_method=self.timing_method,
            speedup_eager=self.speedup_eager, speedup_compile=self.speedup_compile,
            roofline_pct=self.roofline_pct, copy_pct=self.copy_pct,
            max_abs_err=self.max_abs_err, launches=launch_pairs(self.launches),
            interpreter=self.interpreter, wall_s=self.wall_s)


@dataclass(frozen=True)
class ABResult:
    """Interleaved A/B timing of an incumbent and a challenger on the same inputs.

    ``significant`` is True only when the challenger is faster by more than
    ``threshold_pct`` = max(1 %, 3 × the larger measured spread)."""

    ok: bool
    reason: str = reasons.ACCEPTED
    message: str = ""
    incumbent_ms: float | None = None
    challenger_ms: float | None = None
    spread_pct: float | None = None
    gain_pct: float | None = None  # how much faster the challenger is, in %
    threshold_pct: float | None = None
    significant: bool = False

    @classmethod
    def from_timings(cls, a: dict[str, Any], b: dict[str, Any]) -> ABResult:
        """From the incumbent's (``a``) and the challenger's (``b``) timed medians and spreads."""
        spread = max(float(a["spread_pct"]), float(b["spread_pct"]))
        gain = 100.0 * (float(a["median_ms"]) / float(b["median_ms"]) - 1.0)
        threshold = max(1.0, 3.0 * spread)
        return cls(ok=True, incumbent_ms=a["median_ms"], challenger_ms=b["median_ms"],
                   spread_pct=spread, gain_pct=gain, threshold_pct=threshold,
                   significant=gain > threshold)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
