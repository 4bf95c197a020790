"""The operating system's containment of candidate code (DESIGN §4, first layer).

Every candidate runs in a fresh process forked from a clean worker, in user, network and mount
namespaces of its own (its process group killed whole afterwards), under Landlock (reads only the system, Python and its scratch folder;
writes only the scratch folder; runs no program but the GPU compiler's), a seccomp filter, no
capabilities, no_new_privs, rlimits and an environment with none of the user's variables.
``probe`` says which of these this kernel offers; ``evotui doctor`` shows it.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import evotui.eval.sandbox.landlock as landlock
import evotui.eval.sandbox.namespaces as namespaces
import evotui.eval.sandbox.seccomp as seccomp
from evotui.eval.sandbox.isolated import Outcome, confine, run_isolated
from evotui.eval.sandbox.policy import Confinement, default_limits, scrubbed_environment

if TYPE_CHECKING:
    from evotui.eval.messages import Request

__all__ = ["Confinement", "Isolation", "Outcome", "confine", "confinement_for", "probe",
           "run_isolated", "scrubbed_environment"]

PARTS = ("namespaces", "landlock", "seccomp", "confined run")


@dataclass(frozen=True)
class Isolation:
    """Each part of the sandbox: None when it works here, else why not."""

    problems: dict[str, str | None]
    landlock_abi: int

    @property
    def complete(self) -> bool:
        return not any(self.problems.values())

    def missing(self) -> str:
        return "; ".join(f"{part}: {why}" for part, why in self.problems.items() if why)

    def as_dict(self) -> dict[str, Any]:
        return {"problems": self.problems, "landlock_abi": self.landlock_abi}

    @staticmethod
    def from_dict(d: dict[str, Any]) -> Isolation:
        return Isolation(dict(d.get("problems") or {}), int(d.get("landlock_abi") or 0))

    def summary(self) -> str:
        if not self.complete:
            return f"NOT sandboxed ({self.missing()})"
        return (f"sandboxed: a fresh process per candidate, user/network/mount namespaces, "
                f"Landlock ABI {self.landlock_abi}, seccomp, rlimits, scrubbed environment, "
                "its process group killed after it")


def _in_fork(step: Any) -> str | None:
    """Run ``step`` in a throwaway process: None when it worked, else its error."""
    def body(_: Any) -> dict[str, Any]:
        step()
        return {"ok": True}

    outcome = run_isolated(lambda: None, body, None, 60.0)
    if outcome.answer is None:
        return outcome.error or f"the probe's process died ({outcome.exit_status})"
    return None if outcome.answer.get("ok") else str(outcome.answer.get("message"))


def _landlock_alone() -> None:
    landlock.set_no_new_privs()
    landlock.restrict([])


def probe(gpu: str | None = None) -> Isolation:
    """Which parts of the sandbox this machine offers, each tried in a throwaway process."""
    abi = landlock.abi_version()
    problems: dict[str, str | None] = {
        "namespaces": _in_fork(namespaces.enter),
        "landlock": None if abi >= 1 else "the kernel offers no Landlock (needs Linux >= 5.13 "
                                          "with landlock in the lsm= boot list)",
        "seccomp": None if seccomp.supported() else f"no filter for {os.uname().machine}",
    }
    if problems["landlock"] is None:
        problems["landlock"] = _in_fork(_landlock_alone)
    if problems["seccomp"] is None:
        problems["seccomp"] = _in_fork(seccomp.install)
    if not any(problems.values()):
        with tempfile.TemporaryDirectory(prefix="evotui-probe-") as scratch:
            outcome = run_isolated(lambda: None, lambda _: {"ok": True},
                                   Confinement(scratch=scratch, gpu=gpu,
                                               limits=default_limits(60.0, gpu is not None)),
                                   60.0)
        if not (outcome.answer or {}).get("ok"):
            problems["confined run"] = (outcome.answer or {}).get("message") or outcome.error \
                or f"exit status {outcome.exit_status}"
        else:
            problems["confined run"] = None
    return Isolation(problems, abi)


def confinement_for(req: Request, device: str, timeout_s: float) -> Confinement:
    gpu = None if device == "cpu" else (os.environ.get("CUDA_VISIBLE_DEVICES") or "0")
    return Confinement(scratch=req.scratch, gpu=gpu, protected=req.protected,
                       limits=default_limits(timeout_s, gpu is not None))
