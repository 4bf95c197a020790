"""The evaluator on a Dask cluster: ``DaskEvaluatorPool`` (``evotui run --scheduler ADDRESS``).

It is an ``Evaluator`` (``evotui.eval.evaluator``), as ``EvaluatorPool`` is, and has its sync
``evaluate``, ``compare`` and ``sanitize`` too. Every evaluation is a Dask task that needs one
unit of the workers' ``GPU`` resource, so the scheduler places at most one candidate per GPU
at a time; in the worker it runs on that worker's own ``EvaluatorPool`` lane
(``evotui.eval.dask_worker``): candidate code only ever runs in the lane's candidate worker
subprocess, and the verdict is the judge's.

Needs ``pip install "evotui[dask]"`` here and on every worker host (docs/distributed.md).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import evotui.eval.dask_worker as remote
from evotui.core import reasons
from evotui.eval.dask_worker import PoolConfig, TaskText
from evotui.eval.evaluator import Evaluator
from evotui.eval.results import ABResult, EvalRequest, EvalResult
from evotui.task.model import TaskRef

INSTALL_HINT = 'the Dask backend needs dask.distributed: pip install "evotui[dask]"'


@dataclass(frozen=True)
class DaskLane:
    worker: str  # the Dask worker's address
    device: str  # as the user sees it: host/cuda:i (or host/cpu:NAME)


class DaskEvaluatorPool(Evaluator):
    """Evaluate candidates on the GPU workers of a Dask cluster, one candidate per GPU.

    ``scheduler`` is an address (``tcp://host:8786``), a cluster object (``LocalCluster``,
    dask-jobqueue's ``SLURMCluster``, …) or a ``distributed.Client``. ``device`` is what each
    worker's pool uses (``auto``/``cuda``/``cpu``, as ``--device``). Workers without the
    ``resource`` are ignored; the pool waits up to ``wait_s`` for the first one to join.
    Raises ``RuntimeError`` (one line for the user) when the cluster cannot be used.
    """

    def __init__(self, scheduler: Any, *, device: str = "auto", static_checks: bool = True,
                 resource: str = "GPU", wait_s: float = 60.0,
                 connect_timeout_s: float = 15.0) -> None:
        try:
            from distributed import Client
        except ImportError:
            raise RuntimeError(INSTALL_HINT) from None
        self.config = PoolConfig(device=device, static_checks=static_checks, resource=resource)
        self._owns_client = not isinstance(scheduler, Client)
        where = scheduler if isinstance(scheduler, str) else type(scheduler).__name__
        if self._owns_client:
            try:
                self.client = Client(scheduler, timeout=connect_timeout_s)
            except (OSError, TimeoutError) as e:
                raise RuntimeError(f"cannot reach the Dask scheduler at {where}: {e}") from None
        else:
            self.client = scheduler
        self.lanes: list[DaskLane] = []
        self.devices: list[str] = []  # one per lane, as the user sees it
        self._closed = False
        try:
            self._discover(where, wait_s)
        except BaseException:
            self.close()
            raise

    # ---- what the engine reads ---------------------------------------------------------

    @property
    def is_cpu(self) -> bool:
        return self._is_cpu

    def _discover(self, where: str, wait_s: float) -> None:
        """Ask every worker that declares the resource to open its pool and name its lanes."""
        resource = self.config.resource
        deadline = time.monotonic() + wait_s
        while True:
            info = self.client.scheduler_info()["workers"]
            workers = sorted(a for a, w in info.items() if (w.get("resources") or {}).get(resource, 0) >= 1)
            if workers:
                break
            if time.monotonic() >= deadline:
                raise RuntimeError(
                    f"no Dask worker at {where} declares a {resource} resource within "
                    f"{wait_s:.0f} s (start one worker per GPU: CUDA_VISIBLE_DEVICES=i dask "
                    f"worker ADDRESS --nthreads 1 --resources {resource}=1)")
            time.sleep(0.5)
        probes = self.client.run(remote.probe, self.config, workers=workers)
        kinds = {bool(p["is_cpu"]) for p in probes.values()}
        if len(kinds) > 1:
            cpu = sorted(a for a, p in probes.items() if p["is_cpu"])
            raise RuntimeError(f"Dask workers {', '.join(cpu)} see no GPU while others do: "
                               "start GPU workers only, or use --device cpu everywhere")
        self._is_cpu = kinds.pop()
        self.lanes = [DaskLane(addr, dev) for addr in workers for dev in probes[addr]["devices"]]
        self.devices = [lane.device for lane in self.lanes]

    # ---- evaluating ----------------------------------------------------------------------

    def _submit(self, fn: Callable[..., Any], what: str, *args: Any) -> Any:
        return self.client.submit(fn, self.config, *args, key=f"evotui-{what}-{uuid.uuid4().hex}",
                                  pure=False, resources={self.config.resource: 1})

    def _submit_evaluate(self, request: EvalRequest) -> Any:
        return self._submit(remote.evaluate, "evaluate", TaskText.of(request.task), request)

    @staticmethod
    def _failed(e: BaseException, t0: float) -> EvalResult:
        return EvalResult.rejected(reasons.HARNESS_ERROR, f"Dask: {type(e).__name__}: {e}",
                                   device="dask", wall_s=time.monotonic() - t0)

    def evaluate(self, request: EvalRequest) -> EvalResult:
        t0 = time.monotonic()
        try:
            return self._submit_evaluate(request).result()
        except Exception as e:  # a lost worker or scheduler: the harness failed, not the candidate
            return self._failed(e, t0)

    async def aevaluate(self, request: EvalRequest) -> EvalResult:
        t0 = time.monotonic()
        try:
            return await self._wait(self._submit_evaluate(request))
        except asyncio.CancelledError:
            raise
        except Exception as e:
            return self._failed(e, t0)

    async def _wait(self, future: Any) -> Any:
        """Await a Dask future without holding a thread while it runs (many GPUs, few cores)."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()

        def settle() -> None:
            if not done.done():
                done.set_result(None)

        def wake(_: Any) -> None:
            try:
                loop.call_soon_threadsafe(settle)
            except RuntimeError:  # the event loop is gone
                pass

        future.add_done_callback(wake)
        try:
            await done
        except asyncio.CancelledError:
            future.cancel()
            raise
        return await asyncio.to_thread(future.result)

    def compare(self, task: TaskRef, incumbent: str, challenger: str,
                timeout_s: float = 300.0) -> ABResult | None:
        """Interleaved A/B timing on one GPU worker (None on the CPU, as ``EvaluatorPool``)."""
        if self.is_cpu:
            return None
        try:
            return self._submit(remote.compare, "compare", TaskText.of(task), incumbent,
                                challenger, timeout_s).result()
        except Exception as e:
            return ABResult(ok=False, reason=reasons.HARNESS_ERROR,
                            message=f"Dask: {type(e).__name__}: {e}")

    async def acompare(self, task: TaskRef, incumbent: str, challenger: str,
                       timeout_s: float = 300.0) -> ABResult | None:
        return await asyncio.to_thread(self.compare, task, incumbent, challenger, timeout_s)

    def sanitize(self, task: TaskRef, source: str, timeout_s: float = 600.0) -> Any:
        """compute-sanitizer on a worker's GPU (None where it does not apply)."""
        if self.is_cpu:
            return None
        return self._submit(remote.sanitize, "sanitize", TaskText.of(task), source,
                            timeout_s).result()

    async def asanitize(self, task: TaskRef, source: str, timeout_s: float = 600.0) -> Any:
        return await asyncio.to_thread(self.sanitize, task, source, timeout_s)

    def device_facts(self) -> dict[str, Any] | None:
        """GPU name and architecture, from a worker's judge."""
        return self._submit(remote.device_facts, "facts").result()

    # ---- closing -------------------------------------------------------------------------

    def close(self) -> None:
        """Close the workers' pools that no evaluation is using (their lane subprocesses
        exit), then the client when this pool opened it. The cluster itself stays up."""
        if self._closed:
            return
        self._closed = True
        workers = sorted({lane.worker for lane in self.lanes})
        if workers:
            try:
                self.client.run(remote.release, self.config, workers=workers, on_error="ignore")
            except Exception:  # the cluster is already gone
                pass
        if self._owns_client:
            self.client.close()
