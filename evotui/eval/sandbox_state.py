"""What a pool's sandbox means for the user of a command: a refusal, a warning, or a line."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evotui.eval.sandbox import Isolation


@dataclass(frozen=True)
class SandboxState:
    summary: str  # one line for reports and --json
    problem: str | None = None  # the command must not evaluate: say why and how to fix it
    warning: str | None = None  # it evaluates, but the user must know


# a pool that evaluates elsewhere (a Dask cluster) confines its candidates on its own machines
ELSEWHERE = SandboxState("confined by the evaluating workers")


def local_sandbox_state(sandboxed: bool,
                        isolation_of: Callable[[], Isolation | None]) -> SandboxState:
    """For a pool whose candidates run on this machine: ``sandboxed`` unless --no-sandbox;
    ``isolation_of()`` what the sandbox holds here (None: the worker did not start)."""
    if not sandboxed:
        return SandboxState("NOT sandboxed (--no-sandbox)",
                            warning="WARNING: candidates run WITHOUT the sandbox (--no-sandbox): "
                                    "their code can read and write your files and the network")
    isolation = isolation_of()
    if isolation is None:
        return SandboxState("unknown: the candidate worker did not start")
    if not isolation.complete:
        return SandboxState(isolation.summary(), problem=(
            f"candidates cannot be sandboxed on this machine ({isolation.missing()}); "
            "`evotui doctor` says how to fix it, and --no-sandbox evaluates without it"))
    return SandboxState(isolation.summary())
