"""What the suite remembers about each problem, and ``suite.json`` on disk.

``suite.json`` is rewritten atomically (temp file, fsync, rename) whenever a problem starts
or ends, so a crash or Ctrl-C never leaves half a file; a second invocation with the same
``--out`` reads it back, skips the finished problems and resumes the interrupted one.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from evotui.engine.rundir import atomic_write
from evotui.suite.spec import Budget, Problem, SpecError

SUITE_JSON = "suite.json"
SUITE_MD = "suite.md"
VERSION = 1

PENDING, RUNNING = "pending", "running"
ACCEPTED, NO_KERNEL, NOT_STARTED = "accepted", "no_accepted_kernel", "could_not_start"
FINISHED = (ACCEPTED, NO_KERNEL)  # never run again; a problem that could not start is retried


@dataclass
class ProblemResult:
    name: str
    task: str
    seed: str | None = None
    run_dir: str = ""  # relative to the suite folder
    status: str = PENDING
    reason: str = ""  # why it could not start, or why no kernel was accepted
    outcome: str | None = None  # the run's own outcome (completed, stopped, exhausted, failed)
    message: str = ""
    seed_source: str | None = None  # seed.py (the file's name), --seed, derived, model
    seed_detail: str = ""  # the run's own words, e.g. "derived from the reference (... template)"
    mutator: str | None = None
    device: str | None = None
    interpreter: bool = False
    evaluations: int = 0  # evaluated children (the seed does not count)
    time_budget_reached: bool = False
    best_id: str | None = None
    time_ms: float | None = None
    speedup_eager: float | None = None
    speedup_compile: float | None = None
    roofline_pct: float | None = None
    eager_ms: float | None = None  # the reference, as the judge timed it
    compile_ms: float | None = None
    allow_torch: list[str] = field(default_factory=list)  # torch ops the kernel could keep
    allow_torch_option: bool = False  # ... because --allow-torch said so
    attempts: int = 0  # invocations that started or resumed it
    started: str | None = None
    finished: str | None = None
    wall_seconds: float | None = None
    report_finished: str | None = None  # the run's report.json these figures come from

    @property
    def done(self) -> bool:
        return self.status in FINISHED

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> ProblemResult:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in raw.items() if k in known})

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class SuiteSettings:
    """How the suite runs; stored so that a second invocation continues the same suite."""

    budget: Budget
    device: str = "auto"
    mutator: str = "param"
    scheduler: str | None = None
    jobs: int | None = None  # problems at once; None: 1, or one per GPU worker of a cluster
    allow_torch: tuple[str, ...] = ()
    shape: dict[str, Any] = field(default_factory=dict)  # --shape NAME=VALUE, for every problem
    model: str | None = None
    ollama_host: str | None = None
    eval_timeout: float | None = None
    memory_k: int | None = None  # pieces of advice per prompt; 0: the advice library is off

    def as_dict(self) -> dict[str, Any]:
        return {"budget": self.budget.as_dict(), "device": self.device, "mutator": self.mutator,
                "scheduler": self.scheduler, "jobs": self.jobs,
                "allow_torch": list(self.allow_torch), "shape": dict(self.shape),
                "model": self.model, "ollama_host": self.ollama_host,
                "eval_timeout": self.eval_timeout, "memory_k": self.memory_k}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> SuiteSettings:
        b = raw.get("budget") or {}
        return cls(Budget(b.get("evaluations"), b.get("seconds")), str(raw.get("device", "auto")),
                   str(raw.get("mutator", "param")), raw.get("scheduler"),
                   raw.get("jobs"), tuple(raw.get("allow_torch") or ()),
                   dict(raw.get("shape") or {}), raw.get("model"), raw.get("ollama_host"),
                   raw.get("eval_timeout"), raw.get("memory_k"))


@contextlib.contextmanager
def locked(folder: Path) -> Iterator[None]:
    """Hold ``folder/.suite.lock``: two processes never run the same suite at once."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".suite.lock", "w") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise SpecError(f"{folder} is in use by another evotui suite") from None
        yield


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def load(folder: Path) -> dict[str, Any] | None:
    """The stored ``suite.json`` of ``folder``, or None when there is none."""
    file = folder / SUITE_JSON
    if not file.exists():
        return None
    try:
        data = json.loads(file.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise SpecError(f"cannot read {file}: {e}") from None
    if not isinstance(data, dict) or data.get("version") != VERSION \
            or not isinstance(data.get("problems"), list):
        raise SpecError(f"{file} is not an evotui suite file of version {VERSION}")
    return data


def results_for(problems: list[Problem], stored: dict[str, Any] | None) -> list[ProblemResult]:
    """One result per problem: the stored one when the suite was run before."""
    if stored is None:
        return [ProblemResult(p.name, p.task, p.seed, run_dir=p.name) for p in problems]
    old = [ProblemResult.from_dict(r) for r in stored["problems"] if isinstance(r, dict)]
    if [(r.name, r.task, r.seed) for r in old] != [(p.name, p.task, p.seed) for p in problems]:
        raise SpecError("the suite folder holds a suite of other problems: give the same "
                        "PROBLEMS (or --resume DIR alone), or choose another --out")
    return old


def problems_of(stored: dict[str, Any]) -> list[Problem]:
    return [Problem(r["name"], r["task"], r.get("seed")) for r in stored["problems"]]


def save(folder: Path, data: dict[str, Any], markdown: str) -> None:
    atomic_write(folder / SUITE_JSON, json.dumps(data, indent=1) + "\n")
    atomic_write(folder / SUITE_MD, markdown)
