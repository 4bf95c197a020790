"""What a run keeps in its run directory for a resume: checkpoints (written at the end of each
generation and last of all, after the report) and the restore from one.

``RunState`` knows how to become a dict and back; this adds the rest of a snapshot (run
options, mutator state and account, where the event log stood) and the ordering of writes.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from evotui.engine import events as ev
from evotui.engine import report as reporting
from evotui.engine.context import Emit
from evotui.engine.mutators import Mutator
from evotui.engine.rundir import RunDir
from evotui.engine.state import EngineConfig, RunState


class Checkpoints:
    def __init__(self, state: RunState, mutator: Mutator, task_path: Path,
                 run_dir: RunDir | None, run_info: dict[str, Any],
                 elapsed: Callable[[], float]) -> None:
        self.state = state
        self.mutator = mutator
        self.task_path = task_path
        self.run_dir = run_dir  # None: nothing is written
        self.run_info = run_info  # the run's options: what a resume needs
        self._elapsed = elapsed  # seconds of the run so far, resumes included
        self._lock = asyncio.Lock()
        self._seq = itertools.count(1)

    def snapshot(self) -> dict[str, Any]:
        """A consistent snapshot: candidates in flight are left out (a resume redoes them)."""
        mutator = self.mutator
        return {
            **self.state.to_dict(self._elapsed()),
            "run": self.run_info,
            "task": str(self.task_path),
            "mutator": {"name": mutator.name, "model": mutator.model,
                        "state": mutator.state(), "account": mutator.account.as_dict()},
            "events_offset": self.run_dir.events_offset() if self.run_dir else 0,
            "written": time.time(),
            "seq": next(self._seq),  # which of two overlapping writes is newer
        }

    async def write(self) -> None:
        run_dir = self.run_dir
        if run_dir is None:
            return
        async with self._lock:
            data = self.snapshot()
            # A Stop can cancel this task while the thread still writes; the final checkpoint
            # then overlaps it: RunDir serialises the two and keeps the newer (its ``seq``).
            await asyncio.to_thread(run_dir.write_checkpoint, data)

    async def write_final(self, report: dict[str, Any], emit: Emit) -> None:
        """``report`` and best.py, then RunFinished, then the last checkpoint (which so covers
        the whole log)."""
        state, run_dir = self.state, self.run_dir
        finished = ev.RunFinished(outcome=state.outcome or "stopped",
                                  message=state.outcome_message, evaluated=state.evaluated,
                                  best_id=state.best_id,
                                  run_dir=str(run_dir.path) if run_dir else None)
        if run_dir is None:
            emit(finished)
            return
        try:
            async with self._lock:
                run_dir.write_report(report, reporting.render_markdown(report))
                best = state.best
                if best is not None:
                    run_dir.write_best(reporting.best_file(report, best.source))
                emit(finished)
                if state.best_id is not None:  # an accepted seed: something to resume from
                    run_dir.write_checkpoint(self.snapshot())
        except OSError as e:
            emit(ev.Status(f"cannot write the run directory {run_dir.path}: {e}", "error"))


def restore(ck: dict[str, Any], config: EngineConfig, mutator: Mutator,
            run_dir: RunDir | None) -> RunState:
    """The state of a checkpointed run; the mutator gets its state back and the run directory
    forgets what was written after the checkpoint."""
    state = RunState.from_dict(ck, config)
    mut = ck.get("mutator") or {}
    mutator.load_state({**(mut.get("state") or {}), "account": mut.get("account") or {}})
    if run_dir is not None:
        run_dir.truncate_events(int(ck.get("events_offset", 0)))
        run_dir.truncate_sources(ck.get("sources_offset"))
    return state
