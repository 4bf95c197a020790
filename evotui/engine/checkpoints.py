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
from typing import TYPE_CHECKING, Any

from evotui.engine import events as ev
from evotui.engine import report as reporting
from evotui.engine.mutators import Mutator
from evotui.engine.rundir import RunDir
from evotui.engine.state import EngineConfig, RunState

if TYPE_CHECKING:
    from evotui.engine.loop import Engine


class Checkpoints:
    def __init__(self) -> None:
        self._lock = asyncio.Lock()
        self._seq = itertools.count(1)

    def snapshot(self, engine: Engine) -> dict[str, Any]:
        """A consistent snapshot: candidates in flight are left out (a resume redoes them)."""
        return {
            **engine.state.to_dict(engine.elapsed()),
            "run": engine.run_info,
            "task": str(engine.task.path),
            "mutator": {"name": engine.mutator.name, "model": engine.mutator.model,
                        "state": engine.mutator.state(), "account": engine.account()},
            "events_offset": engine.run_dir.events_offset() if engine.run_dir else 0,
            "written": time.time(),
            "seq": next(self._seq),  # which of two overlapping writes is newer
        }

    async def write(self, engine: Engine) -> None:
        if engine.run_dir is None:
            return
        async with self._lock:
            data = self.snapshot(engine)
            # A Stop can cancel this task while the thread still writes; the final checkpoint
            # then overlaps it: RunDir serialises the two and keeps the newer (its ``seq``).
            await asyncio.to_thread(engine.run_dir.write_checkpoint, data)

    async def write_final(self, engine: Engine,
                          emit: Callable[[ev.Event], None]) -> dict[str, Any]:
        """Report and best.py, then RunFinished, then the last checkpoint (which so covers
        the whole log). Returns the report."""
        report, run_dir = engine.report(), engine.run_dir
        finished = ev.RunFinished(outcome=engine.outcome or "stopped",
                                  message=engine.outcome_message, evaluated=engine.evaluated,
                                  best_id=engine.best_id,
                                  run_dir=str(run_dir.path) if run_dir else None)
        if run_dir is None:
            emit(finished)
            return report
        try:
            async with self._lock:
                run_dir.write_report(report, reporting.render_markdown(report))
                best = engine.best
                if best is not None:
                    run_dir.write_best(reporting.best_file(report, best.source))
                emit(finished)
                if engine.best_id is not None:  # an accepted seed: something to resume from
                    run_dir.write_checkpoint(self.snapshot(engine))
        except OSError as e:
            emit(ev.Status(f"cannot write the run directory {run_dir.path}: {e}", "error"))
        return report


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
