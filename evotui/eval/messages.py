"""The records that cross the evaluator's process boundaries.

- ``Request``: built once by the pool for one evaluation or one A/B; the candidate worker
  runs it and the judge checks the report against it.
- ``Report`` (an evaluation's) and ``ABReport`` (an A/B's): what the candidate worker says
  its candidate's process did, to the pool and from there to the judge.
- ``Verdict``: the judge's decision, to the pool.

Each travels as one JSON object over ``protocol.send``/``recv`` (never pickle): ``to_json``
writes it, ``from_json`` reads it back and checks every field's type (``json_fields``). A
report comes from a process that ran candidate code: ``parse`` makes a malformed one a
rejection (``tampered``), never a traceback. Tensors stay the dicts ``protocol.TensorMeta``
reads (``Meta``), loaded where they are checked.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from evotui.core import reasons
from evotui.eval.json_fields import (  # noqa: F401 - MalformedMessage is the messages' too
    ABSENT,
    Fields,
    MalformedMessage,
    Record,
    is_int,
    is_str,
    list_of,
)
from evotui.eval.timing_stats import FreshCheck, Timing

Meta = dict[str, Any]  # one tensor as ``protocol.dump_tensor`` described it


# -- the request -------------------------------------------------------------------------

@dataclass(frozen=True)
class TrialSpec(Record):
    seed: int
    shape: int  # an index into the request's shapes

    @staticmethod
    def from_json(value: Any, what: str = "a trial") -> TrialSpec:
        f = Fields(value, what)
        return TrialSpec(f.integer("seed"), f.integer("shape"))


@dataclass(frozen=True)
class Request(Record):
    """One evaluation (``candidate``, ``trials`` and the seeds after them) or one A/B
    (``candidates``); the pool draws every seed."""

    task: str  # the task file's path
    task_sha256: str | None
    scratch: str  # the lane's folder
    shapes: tuple[dict[str, Any], ...]  # the first is the timed one
    init_seed: int
    timing_seed: int
    timing_seeds: tuple[int, ...]  # one per timed input set
    recheck_seed: int
    sandbox: bool = True
    protected: tuple[str, ...] = ()  # never readable from the sandbox
    atol: float | None = None
    rtol: float | None = None
    allow_torch: tuple[str, ...] = ()
    static_checks: bool = True
    gate: bool = False  # the device is shared: the candidate asks for its gate
    # an evaluation
    candidate: str = ""
    trials: tuple[TrialSpec, ...] = ()
    time: bool = False
    slow_cutoff_ms: float | None = None
    handover_limit_bytes: int | None = None
    verify_seed: int = 0
    ghost_seed: int = 0
    ghost_shape: int = 0
    dialect: str = "triton"
    warm_seed: int | None = None  # the call that compiles, before the device's gate
    # an A/B
    candidates: tuple[str, ...] = ()

    @property
    def timed_seeds(self) -> list[int]:
        return list(self.timing_seeds or (self.timing_seed,))

    def calls_dumped_at(self, shape: int, trials_done: int, audited: bool) -> int:
        """How many more calls at ``shape`` hand their outputs over: trials; at the timed
        shape the last timed call, the recheck, the verify call and (``audited``: a GPU's)
        one timed call picked at random; the ghost."""
        calls = sum(1 for t in self.trials if t.shape == shape) - trials_done
        if self.time and shape == 0:
            calls += 3 + audited
        return calls + (self.ghost_shape == shape)

    @staticmethod
    def from_json(value: Any) -> Request:
        f = Fields(value, "the request")
        return Request(
            task=f.text("task"), task_sha256=f.text("task_sha256", None),
            scratch=f.text("scratch"),
            shapes=f.seq("shapes", lambda s: isinstance(s, dict), "shapes", ABSENT),
            init_seed=f.integer("init_seed"), timing_seed=f.integer("timing_seed"),
            timing_seeds=f.seq("timing_seeds", is_int, "seeds"),
            recheck_seed=f.integer("recheck_seed"), sandbox=f.flag("sandbox", True),
            protected=f.seq("protected", is_str, "paths"),
            atol=f.number("atol", None), rtol=f.number("rtol", None),
            allow_torch=f.seq("allow_torch", is_str, "op names"),
            static_checks=f.flag("static_checks", True), gate=f.flag("gate", False),
            candidate=f.text("candidate", ""), trials=f.records("trials", TrialSpec.from_json),
            time=f.flag("time", False), slow_cutoff_ms=f.number("slow_cutoff_ms", None),
            handover_limit_bytes=f.integer("handover_limit_bytes", None),
            verify_seed=f.integer("verify_seed", 0), ghost_seed=f.integer("ghost_seed", 0),
            ghost_shape=f.integer("ghost_shape", 0), dialect=f.text("dialect", "triton"),
            warm_seed=f.integer("warm_seed", None),
            candidates=f.seq("candidates", is_str, "paths"))


# -- the worker's report -------------------------------------------------------------------

@dataclass(frozen=True)
class Checked(Record):
    """The outputs of one call on the values of input set ``seed`` after ``perturbed``
    changes of them (``evotui.eval.perturb``)."""

    seed: int
    outputs: tuple[Meta, ...]
    perturbed: int = 0

    @staticmethod
    def from_json(value: Any, what: str = "a checked call") -> Checked:
        f = Fields(value, what)
        return Checked(f.integer("seed"), f.metas("outputs"), f.integer("perturbed", 0))


@dataclass(frozen=True)
class Audited(Checked):
    """The timed call picked at random for a check (``evotui.eval.timed_calls.Audit``)."""

    of: int = 0  # how many calls it was picked from

    @staticmethod
    def from_json(value: Any, what: str = "the audited call") -> Audited:
        f = Fields(value, what)
        return Audited(f.integer("seed"), f.metas("outputs"), f.integer("perturbed", 0),
                       f.integer("of", 0))


@dataclass(frozen=True)
class SetAfter(Record):
    """A timed input set after the timed calls: its seed, its changes, its inputs."""

    seed: int
    perturbed: int
    inputs: tuple[Meta, ...]

    @staticmethod
    def from_json(value: Any, what: str = "a timed set") -> SetAfter:
        f = Fields(value, what)
        return SetAfter(f.integer("seed"), f.integer("perturbed", 0), f.metas("inputs"))


@dataclass(frozen=True)
class TrialReport(Record):
    seed: int
    shape: int
    launches: int
    outputs: tuple[Meta, ...]
    inputs_after: tuple[Meta, ...]
    # CUDA C: the bands around each buffer, in order, each with the buffer's ``label``
    guards: tuple[Meta, ...] | None = None

    @staticmethod
    def from_json(value: Any, what: str = "a trial") -> TrialReport:
        f = Fields(value, what)
        return TrialReport(f.integer("seed"), f.integer("shape"), f.integer("launches"),
                           f.metas("outputs"), f.metas("inputs_after"), f.metas("guards", None))


@dataclass(frozen=True)
class GhostReport(Record):
    """The call with every kernel launch skipped: its outputs, or why it failed."""

    seed: int
    shape: int = 0
    outputs: tuple[Meta, ...] | None = None
    error: str | None = None

    @staticmethod
    def from_json(value: Any, what: str = "the ghost replay") -> GhostReport:
        f = Fields(value, what)
        return GhostReport(f.integer("seed"), f.integer("shape", 0), f.metas("outputs", None),
                           f.text("error", None))


@dataclass(frozen=True)
class TimingReport(Record):
    """The timed phase: the figures (those of ``Timing``) and what the judge checks of it."""

    median_ms: float
    spread_pct: float
    samples: int
    method: str  # "events", "graph", "coarse" or "interpreter"
    seed: int  # the set of the last timed call
    calls: int
    launches: int  # by all the timed calls
    launches_per_call: int  # by one checked call
    outputs: tuple[Meta, ...]  # of the last timed call
    recheck: Checked  # new values in the timed tensors
    verify: Checked  # fresh tensors after timing
    inputs_after: tuple[SetAfter, ...]
    synced_ms: float | None = None
    synced_tail_ms: float | None = None
    set_medians_ms: tuple[float, ...] = ()
    perturbed: int = 0
    watched_policy: dict[str, int] = field(default_factory=dict)
    graph_replay: Checked | None = None
    fresh_check: FreshCheck | None = None
    earlier_outputs: tuple[Checked, ...] = ()  # the interpreter's: every timed call
    audited: Audited | None = None  # a GPU's: one prepared call
    weights_changed: tuple[str, ...] = ()

    @property
    def figures(self) -> Timing:
        return Timing(self.median_ms, self.spread_pct, self.samples, self.method,
                      self.synced_ms, self.synced_tail_ms, self.set_medians_ms)

    @staticmethod
    def from_json(value: Any, what: str = "the timing") -> TimingReport:
        f = Fields(value, what)
        return TimingReport(
            **Timing.read(f), seed=f.integer("seed"), calls=f.integer("calls"),
            launches=f.integer("launches"), launches_per_call=f.integer("launches_per_call"),
            outputs=f.metas("outputs"), recheck=f.record("recheck", Checked.from_json),
            verify=f.record("verify", Checked.from_json),
            inputs_after=f.records("inputs_after", SetAfter.from_json),
            perturbed=f.integer("perturbed", 0), watched_policy=f.counts("watched_policy"),
            graph_replay=f.record("graph_replay", Checked.from_json, None),
            fresh_check=f.record("fresh_check", FreshCheck.from_json, None),
            earlier_outputs=f.records("earlier_outputs", Checked.from_json),
            audited=f.record("audited", Audited.from_json, None),
            weights_changed=f.seq("weights_changed", is_str, "names"))


R = TypeVar("R", bound="Report | ABReport")


class _Answer(Record):
    """What both reports share: whether the candidate ran, and the candidate worker's own
    fields (set whatever its candidate's process answered)."""

    @classmethod
    def failed(cls: type[R], reason: str, message: str, restart: bool = False) -> R:
        return cls(ok=False, reason=reason, message=message, restart=restart)

    @classmethod
    def parse(cls: type[R], value: Any) -> R:
        """A report from a process that ran candidate code: a malformed one is a rejection."""
        try:
            return cls.from_json(value)  # type: ignore[attr-defined, no-any-return]
        except MalformedMessage as e:
            return cls.failed(reasons.TAMPERED, f"malformed report: {e}")

    def handed_over(self: R, gated: bool, blobs: list[str | None], digest_key: int | None) -> R:
        return replace(self, gated=gated, blobs=tuple(blobs), digest_key=digest_key)


def _header(f: Fields) -> dict[str, Any]:
    return {"ok": f.flag("ok"), "reason": f.text("reason", ""), "message": f.text("message", ""),
            "restart": f.flag("restart", False), "gated": f.flag("gated", False),
            "blobs": f.seq("blobs", lambda b: b is None or isinstance(b, str), "paths"),
            "digest_key": f.integer("digest_key", None)}


@dataclass(frozen=True)
class Report(_Answer):
    """An evaluation, as the candidate's process reports it (a failure: ``ok`` false, a
    ``reason`` and a ``message``)."""

    ok: bool
    reason: str = ""
    message: str = ""
    restart: bool = False  # the worker should not be reused
    trials: tuple[TrialReport, ...] = ()
    policy: dict[str, int] = field(default_factory=dict)  # torch ops the trials computed with
    launches: dict[str, int] = field(default_factory=dict)  # per kernel, over the trials
    phases: dict[str, float] = field(default_factory=dict)  # seconds
    timing: TimingReport | None = None
    ghost: GhostReport | None = None
    threads_started: int = 0
    children: tuple[int, ...] = ()
    replaced: tuple[str, ...] = ()  # harness code found replaced
    timer_intact: bool = True
    gated: bool = False  # its outputs were handed over under the device's gate
    blobs: tuple[str | None, ...] = ()  # where the judge reads the sealed memfds
    digest_key: int | None = None  # the key of its inputs' fingerprints

    @staticmethod
    def from_json(value: Any) -> Report:
        f = Fields(value, "the report")
        return Report(
            **_header(f), trials=f.records("trials", TrialReport.from_json),
            policy=f.counts("policy"), launches=f.counts("launches"), phases=f.numbers("phases"),
            timing=f.record("timing", TimingReport.from_json, None),
            ghost=f.record("ghost", GhostReport.from_json, None),
            threads_started=f.integer("threads_started", 0),
            children=f.seq("children", is_int, "process ids"),
            replaced=f.seq("replaced", is_str, "names"), timer_intact=f.flag("timer_intact", True))


@dataclass(frozen=True)
class ABReport(_Answer):
    """An A/B: each candidate's timing, its outputs on new values after it, its audited
    call and the weights its kernels changed."""

    ok: bool
    reason: str = ""
    message: str = ""
    restart: bool = False
    seed: int = 0  # the values of the final calls
    timings: tuple[Timing, ...] = ()
    outputs: tuple[tuple[Meta, ...], ...] = ()
    audited: tuple[Audited | None, ...] = ()
    weights_changed: tuple[tuple[str, ...], ...] = ()
    watched_policy: dict[str, int] = field(default_factory=dict)
    gated: bool = False
    blobs: tuple[str | None, ...] = ()
    digest_key: int | None = None

    @staticmethod
    def from_json(value: Any) -> ABReport:
        f = Fields(value, "the A/B report")
        return ABReport(
            **_header(f), seed=f.integer("seed", 0),
            timings=f.records("timings", Timing.from_json),
            outputs=f.records("outputs", list_of(lambda m: isinstance(m, dict), "tensors")),
            audited=f.records("audited", lambda v, what: None if v is None
                              else Audited.from_json(v, what)),
            weights_changed=f.records("weights_changed", list_of(is_str, "names")),
            watched_policy=f.counts("watched_policy"))


# -- the verdict -------------------------------------------------------------------------

@dataclass(frozen=True)
class Details(Record):
    """The figures of a verdict (of a mismatch: its error and how many elements)."""

    max_abs_err: float | None = None
    max_rel_err: float | None = None
    bad_elements: int | None = None
    launches: dict[str, int] = field(default_factory=dict)
    timing: Timing | None = None
    roofline_pct: float | None = None
    eager_ms: float | None = None
    compile_ms: float | None = None
    copy_ms: float | None = None  # a plain device copy of the bytes the call moves
    copy_pct: float | None = None
    speedup_eager: float | None = None
    speedup_compile: float | None = None

    @staticmethod
    def from_json(value: Any, what: str = "the details") -> Details:
        f = Fields(value, what)
        numbers = {k: f.number(k, None) for k in (
            "max_abs_err", "max_rel_err", "roofline_pct", "eager_ms", "compile_ms", "copy_ms",
            "copy_pct", "speedup_eager", "speedup_compile")}
        return Details(**numbers, bad_elements=f.integer("bad_elements", None),
                       launches=f.counts("launches"),
                       timing=f.record("timing", Timing.from_json, None))


@dataclass(frozen=True)
class Verdict(Record):
    accepted: bool
    reason: str  # a code of evotui.core.reasons
    message: str
    details: Details = field(default_factory=Details)
    index: int | None = None  # an A/B's: the candidate whose check failed
    phases: dict[str, float] = field(default_factory=dict)  # the judge's seconds, by part

    @staticmethod
    def from_json(value: Any) -> Verdict:
        f = Fields(value, "the verdict")
        return Verdict(f.flag("accepted"), f.text("reason"), f.text("message"),
                       f.record("details", Details.from_json, Details()), f.integer("index", None),
                       f.numbers("phases"))


def failure_reply(reason: str, message: str) -> dict[str, Any]:
    """A worker's answer when its op itself failed: a failed report and a rejection alike."""
    return {"ok": False, "accepted": False, "reason": reason, "message": message}
