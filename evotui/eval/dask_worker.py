"""What runs inside each Dask worker process for ``DaskEvaluatorPool``.

Each Dask worker hosts its own ``EvaluatorPool`` (one lane per GPU it owns: a candidate worker
subprocess and a judge subprocess), created lazily on first use and closed when idle. Only
harness code runs in the Dask worker itself: candidate code runs in the lane's candidate
worker and the verdict is the judge's, so DESIGN invariants 2 and 3 hold on every host as
they do on one.

Tasks travel as text (``TaskText``): the remote host may not share the parent's filesystem,
so the task file is written once per content into a private temporary directory here.
"""

from __future__ import annotations

import asyncio
import atexit
import hashlib
import os
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from evotui.eval.pool import EvaluatorPool, physical_gpu
from evotui.eval.results import ABResult, EvalRequest, EvalResult
from evotui.task.model import TaskMeta, TaskRef

IDLE_S = float(os.environ.get("EVOTUI_DASK_IDLE_S", "900"))  # an unused pool is closed after
REAP_EVERY_S = 30.0


@dataclass(frozen=True)
class PoolConfig:
    """How every Dask worker builds its pool (one pool per distinct config per worker)."""

    device: str = "auto"  # as --device: auto | cuda | cpu (cpu: Triton's interpreter)
    static_checks: bool = True
    resource: str = "GPU"  # the worker resource that counts this worker's lanes


@dataclass(frozen=True)
class TaskText:
    """A task as it travels: the file's text and what the parent read from it (its
    metadata, the digest of the text it resolved, the --shape overrides)."""

    filename: str
    source: str
    meta: TaskMeta
    sha256: str | None = None
    overrides: tuple[tuple[str, Any], ...] = ()

    @classmethod
    def of(cls, task: TaskRef) -> TaskText:
        return cls(task.path.name, task.source(), task.meta, task.sha256, task.overrides)

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.source.encode()).hexdigest()[:16]


@dataclass
class _Held:
    pool: EvaluatorPool
    in_use: int = 0
    last_used: float = 0.0


class WorkerLanes:
    """This process's pools and task files (one instance per Dask worker process)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pools: dict[PoolConfig, _Held] = {}
        self._paths: dict[str, Path] = {}
        self._dir: Path | None = None
        self._reaper: threading.Thread | None = None

    def task(self, text: TaskText) -> TaskRef:
        """The task written into this host's temporary directory (once per content). Its
        text must still hash as the parent's did (a file changed since the run resolved it
        is refused, as on the parent's host)."""
        with self._lock:
            path = self._paths.get(text.digest)
            if path is None:
                if self._dir is None:
                    self._dir = Path(tempfile.mkdtemp(prefix="evotui-dask-tasks-"))
                    atexit.register(shutil.rmtree, self._dir, True)
                folder = self._dir / text.digest
                folder.mkdir(exist_ok=True)
                path = folder / (Path(text.filename).name or "task.py")
                path.write_text(text.source)
                self._paths[text.digest] = path
        return TaskRef(path=path, meta=text.meta, sha256=text.sha256, overrides=text.overrides)

    @contextmanager
    def pool(self, config: PoolConfig, slots: int) -> Iterator[EvaluatorPool]:
        """This worker's pool for ``config``, held (never closed as idle) while in use."""
        with self._lock:
            held = self._pools.get(config)
            if held is None:
                held = self._pools[config] = _Held(_open_pool(config, slots))
                self._start_reaper()
            held.in_use += 1
        try:
            yield held.pool
        finally:
            with self._lock:
                held.in_use -= 1
                held.last_used = time.monotonic()

    def close_idle(self, idle_s: float, config: PoolConfig | None = None) -> int:
        """Close the pools (of ``config``, or all) unused for ``idle_s`` seconds; how many."""
        now = time.monotonic()
        with self._lock:
            idle = [c for c, h in self._pools.items() if h.in_use == 0
                    and now - h.last_used >= idle_s and config in (None, c)]
            closing = [self._pools.pop(c).pool for c in idle]
        for pool in closing:
            pool.close()
        return len(closing)

    def _start_reaper(self) -> None:
        if self._reaper is None:
            self._reaper = threading.Thread(target=self._reap, name="evotui-reaper", daemon=True)
            self._reaper.start()
            atexit.register(self.close_idle, 0.0)

    def _reap(self) -> None:
        while True:
            time.sleep(REAP_EVERY_S)
            self.close_idle(IDLE_S)


LANES = WorkerLanes()


def _open_pool(config: PoolConfig, slots: int) -> EvaluatorPool:
    """A pool with one lane per declared resource unit; on a GPU, one per visible GPU, which
    must be as many (else two workers would share a GPU and spoil each other's timings)."""
    pool = EvaluatorPool(config.device, lanes=max(1, slots), static_checks=config.static_checks)
    if not pool.is_cpu and len(pool.devices) != slots:
        pool.close()
        raise RuntimeError(
            f"this Dask worker on {socket.gethostname()} sees {len(pool.devices)} GPU(s) but "
            f"declares {config.resource}={slots}: start one worker per GPU with "
            f"CUDA_VISIBLE_DEVICES=i and --resources {config.resource}=1")
    return pool


def _slots(config: PoolConfig, dask_worker: Any = None) -> int:
    if dask_worker is None:
        from distributed import get_worker

        dask_worker = get_worker()
    return int(dask_worker.state.total_resources.get(config.resource, 0))


def label(device: str, dask_worker: Any = None) -> str:
    """How the user sees a lane of this worker: host and physical GPU (``node3/cuda:2``)."""
    host = socket.gethostname()
    if device.startswith("cuda:"):
        return f"{host}/cuda:{physical_gpu(device.split(':')[1])}"
    if dask_worker is None:
        from distributed import get_worker

        dask_worker = get_worker()
    return f"{host}/{device}:{dask_worker.name}"


# ---- what the DaskEvaluatorPool submits ---------------------------------------------------

def _probe(config: PoolConfig, dask_worker: Any) -> dict[str, Any]:
    slots = _slots(config, dask_worker)
    with LANES.pool(config, slots) as pool:
        return {"devices": [label(d, dask_worker) for d in pool.devices],
                "is_cpu": pool.is_cpu, "slots": slots}


async def probe(config: PoolConfig, dask_worker: Any = None) -> dict[str, Any]:
    """Open this worker's pool (no subprocess yet) and say what its lanes are."""
    return await asyncio.to_thread(_probe, config, dask_worker)


async def release(config: PoolConfig, dask_worker: Any = None) -> int:
    """Close this worker's pool for ``config`` unless an evaluation is using it."""
    return await asyncio.to_thread(LANES.close_idle, 0.0, config)


def evaluate(config: PoolConfig, task: TaskText, request: EvalRequest) -> EvalResult:
    local = replace(request, task=LANES.task(task))
    with LANES.pool(config, _slots(config)) as pool:
        result = pool.evaluate(local)
    return replace(result, device=label(result.device))


def compare(config: PoolConfig, task: TaskText, incumbent: str, challenger: str,
            timeout_s: float) -> ABResult | None:
    ref = LANES.task(task)
    with LANES.pool(config, _slots(config)) as pool:
        return pool.compare(ref, incumbent, challenger, timeout_s)


def sanitize(config: PoolConfig, task: TaskText, source: str, timeout_s: float) -> Any:
    ref = LANES.task(task)
    with LANES.pool(config, _slots(config)) as pool:
        return pool.sanitize(ref, source, timeout_s)


def device_facts(config: PoolConfig) -> dict[str, Any] | None:
    with LANES.pool(config, _slots(config)) as pool:
        return pool.device_facts()

