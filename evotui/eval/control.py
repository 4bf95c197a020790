"""The control records of the worker protocol, beside the work records of
``evotui.eval.messages``:

- ``Hello``: a worker's first message, once it has started (or failed to);
- ``Op``: what the pool asks a worker to do, with the request and report it needs;
- the device's gate: a candidate's process asks (``gate_ask(mode)``: to share the device
  for untimed work, or to have it alone for timing; ``evotui.eval.device_gate``), the pool
  grants (``GATE_GRANTED``) once it holds the gate that way;
- ``Done``: the answer of an op that returns no record (``ping``, ``release``, ``facts``).

Each travels as one JSON object and is read back with its fields' types checked; an op the
worker does not know, or one that lacks the records it needs, is ``MalformedMessage``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evotui.eval.json_fields import Fields, MalformedMessage, Record
from evotui.eval.messages import ABReport, Report, Request

SHARE, ALONE = "share", "alone"  # how a candidate asks to use its device
RESERVE = "reserve"  # or only for the host memory its outputs will take, before using it
GATE_ASK: dict[str, Any] = {"gate": "acquire", "mode": SHARE}
GATE_GRANTED: dict[str, Any] = {"gate": "granted"}

# op -> (whether it carries a request, the report type it carries, if any)
_OPS: dict[str, tuple[bool, type[Report] | type[ABReport] | None]] = {
    "ping": (False, None),
    "release": (False, None),  # the candidate worker closes what it last handed over
    "shutdown": (False, None),
    "facts": (False, None),  # the judge's device facts
    "prime": (True, None),  # judge: time a task's baselines (with the device alone)
    "evaluate": (True, None),  # candidate worker: one evaluation
    "compare": (True, None),  # candidate worker: one A/B
    "read": (True, Report),  # judge: read a report's handed-over bytes, before the device
    "judge": (True, Report),  # judge: the verdict on an evaluation's report
    "check_ab": (True, ABReport),  # judge: the checks of an A/B's report
}


def gate_ask(mode: str) -> dict[str, Any]:
    return {"gate": "acquire", "mode": mode}


def is_gate_ask(message: dict[str, Any]) -> bool:
    return message.get("gate") == GATE_ASK["gate"]


def gate_mode(message: dict[str, Any]) -> str:
    """The mode a gate ask names; anything but a known one is asking to share."""
    mode = message.get("mode")
    return mode if mode in (ALONE, RESERVE) else SHARE


def is_gate_granted(message: dict[str, Any]) -> bool:
    return message.get("gate") == GATE_GRANTED["gate"]


@dataclass(frozen=True)
class Hello(Record):
    ready: bool
    pid: int = 0
    isolation: dict[str, Any] | None = None  # a candidate worker's: ``Isolation.as_dict``
    error: str = ""  # why it could not start

    @staticmethod
    def from_json(value: Any) -> Hello:
        f = Fields(value, "the worker's hello")
        isolation = f.record("isolation", _an_object, None)
        return Hello(f.flag("ready"), f.integer("pid", 0), isolation, f.text("error", ""))


@dataclass(frozen=True)
class Op(Record):
    op: str
    request: Request | None = None
    report: Report | ABReport | None = None
    timeout_s: float = 120.0  # an evaluation's or an A/B's, in the candidate's process

    def __post_init__(self) -> None:
        _check(self.op, self.request, self.report)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"op": self.op, "timeout_s": self.timeout_s}
        if self.request is not None:
            out["request"] = self.request.to_json()
        if self.report is not None:
            out["report"] = self.report.to_json()
        return out

    @staticmethod
    def from_json(value: Any) -> Op:
        f = Fields(value, "the op")
        name = f.text("op")
        if name not in _OPS:
            raise MalformedMessage(f"unknown op {name!r}")
        _, kind = _OPS[name]
        request = f.record("request", lambda v, _: Request.from_json(v), None)
        report = None if kind is None else f.record("report", lambda v, _: kind.from_json(v), None)
        return Op(name, request, report, f.number("timeout_s", 120.0))


@dataclass(frozen=True)
class Done(Record):
    ok: bool = True
    facts: dict[str, Any] | None = None  # a ``facts`` op's: the judge's device, None on the CPU

    @staticmethod
    def from_json(value: Any) -> Done:
        f = Fields(value, "the answer")
        return Done(f.flag("ok", True), f.record("facts", _an_object, None))


def _an_object(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise MalformedMessage(f"{what} is not a JSON object")
    return value


def _check(op: str, request: Request | None, report: Report | ABReport | None) -> None:
    if op not in _OPS:
        raise MalformedMessage(f"unknown op {op!r}")
    needs_request, kind = _OPS[op]
    if needs_request and request is None:
        raise MalformedMessage(f"the op {op!r} lacks its request")
    if kind is not None and not isinstance(report, kind):
        raise MalformedMessage(f"the op {op!r} lacks its {kind.__name__}")
