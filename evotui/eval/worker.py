"""Entry point of a worker process: ``python -m evotui.eval.worker --role R --fd N --device D``.

The worker talks to the pool over the inherited socket ``N`` (never over stdout, which the
pool drains and caps). Role ``judge`` never runs candidate code. Role ``candidate`` never runs
it either: it imports torch and Triton once, then forks a fresh, confined process for every
candidate (``evotui.eval.sandbox``), so nothing one candidate does reaches the next.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from dataclasses import replace
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evotui.eval.control import Op
    from evotui.eval.messages import ABReport, Report, Request


def _warm_imports(device: str) -> None:
    """What every candidate's process would import or build, done once before the forks
    (without starting CUDA, which a forked process could not use)."""
    import torch
    import torch._dynamo  # noqa: F401 - it rebinds torch.manual_seed when first imported
    import triton
    import triton.language  # noqa: F401

    import evotui.dialects.triton  # noqa: F401
    import evotui.eval.candidate_runner  # noqa: F401
    from evotui.eval.precision import exact_float32

    exact_float32(torch)  # the forks inherit it

    if device != "cpu":
        try:  # found here with ldconfig, which a sandboxed candidate may not run (Triton's
            # driver itself is not built here: that starts CUDA in torch)
            from triton.backends.nvidia.driver import libcuda_dirs

            libcuda_dirs()
        except Exception:  # noqa: BLE001 - the candidate's own process will say what fails
            pass
    del torch, triton


class CandidateHost:
    """Answers the candidate ops, each in its own sandboxed process."""

    def __init__(self, device: str) -> None:
        from evotui.eval.sandbox import probe

        self.device = device
        _warm_imports(device)
        self.isolation = probe(gpu=os.environ.get("CUDA_VISIBLE_DEVICES") or None
                               if device != "cpu" else None)
        self.held: Any = None  # the last candidate's sealed outputs, until the judge has read them
        self.conn: Connection | None = None  # to the pool, for the device's gate
        self.trusted_cache: Path | None = None
        if device != "cpu" and self.isolation.complete:
            from evotui.eval.compiler_cache import build_trusted_cache
            from evotui.eval.protocol import scratch_root

            root = os.environ.get("EVOTUI_WORKER_ROOT")
            self.trusted_cache = build_trusted_cache(Path(root) if root else scratch_root())

    def _gate(self, mode: str) -> None:
        """The candidate asks for the device (to share it, or alone): the pool holds its gate
        that way from this answer on."""
        import evotui.eval.protocol as protocol
        from evotui.eval.control import gate_ask, is_gate_granted

        assert self.conn is not None
        protocol.send(self.conn, gate_ask(mode))
        if not is_gate_granted(protocol.recv(self.conn)):
            raise RuntimeError("the pool did not grant the device")

    def release(self) -> None:
        """Close the last candidate's outputs: the pool asks once the judge has read them."""
        if self.held is not None:
            self.held.close()
            self.held = None

    def run(self, op: str, req: Request, timeout_s: float) -> Report | ABReport:
        import evotui.eval.outbox as outbox
        from evotui.core import reasons
        from evotui.eval.candidate_runner import CandidateFailure, CandidateRunner
        from evotui.eval.memory_plan import handover_limit
        from evotui.eval.messages import ABReport, Report
        from evotui.eval.sandbox import confinement_for, run_isolated

        self.release()
        kind = Report if op == "evaluate" else ABReport
        if req.sandbox and not self.isolation.complete:
            return kind.failed(reasons.SANDBOX_UNAVAILABLE,
                               f"candidates cannot be confined here: {self.isolation.missing()} "
                               "(`evotui doctor` explains; --no-sandbox evaluates without it)")
        confinement = confinement_for(req, self.device, timeout_s) if req.sandbox else None

        def prepare() -> Any:
            if confinement is not None:
                from evotui.eval.compiler_cache import seed_cache

                seed_cache(self.trusted_cache, confinement.environment()["TRITON_CACHE_DIR"])
            return CandidateRunner.load_tasks(req.task, req.task_sha256)

        def body(tasks: Any) -> dict[str, Any]:
            started = time.monotonic()  # the same clock in every process
            try:
                runner = CandidateRunner(self.device, tasks)
            except CandidateFailure as f:
                return kind.failed(f.reason, f.message).to_json()
            if op != "evaluate":
                return runner.compare(req).to_json()
            report = runner.evaluate(req)
            if report.ok:
                report = replace(report, phases={**report.phases, "start": started - forked,
                                                 "runner": time.monotonic() - started})
            return report.to_json()

        forked = time.monotonic()
        outcome = run_isolated(prepare, body, confinement, timeout_s,
                               blob_limit_bytes=req.handover_limit_bytes or handover_limit(1),
                               gate=self._gate if req.gate else None)
        self.held = outcome.blobs
        ended = time.monotonic()
        if outcome.timed_out:
            return kind.failed(reasons.TIMEOUT,
                               f"no result within {timeout_s:.0f} s; its processes were killed")
        if outcome.answer is None:
            return kind.failed(reasons.CRASHED,
                               outcome.error or _describe_status(outcome.exit_status))
        held = outcome.blobs
        if held is not None and held.error:
            return kind.failed(reasons.TAMPERED, held.error)
        # set here, whatever the answer said: where the judge finds the bytes
        answer = kind.parse(outcome.answer)
        if isinstance(answer, Report) and "runner" in answer.phases:  # its process's exit
            answer = replace(answer, phases={**answer.phases, "exit": ended - forked
                                             - answer.phases["runner"] - answer.phases.get("start", 0.0)})
        return answer.handed_over(
            bool(held and held.gated),
            [outbox.path_of(fd) if fd >= 0 else None for fd in (held.fds if held is not None else [])],
            held.key if held is not None else None)


def _describe_status(code: int | None) -> str:
    import signal

    if code is None:
        return "the candidate's process gave no answer"
    if code < 0:
        try:
            return f"the candidate's process was killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"the candidate's process was killed by signal {-code}"
    return f"the candidate's process exited with status {code} before answering"


def _answer(server: Any, role: str, op: Op) -> dict[str, Any]:
    from evotui.eval.control import Done
    from evotui.eval.messages import failure_reply

    name, request, report = op.op, op.request, op.report
    if name == "ping":
        return Done().to_json()
    if name == "release" and role == "candidate":
        server.release()
        return Done().to_json()
    if name in ("evaluate", "compare") and role == "candidate":
        return server.run(name, request, op.timeout_s).to_json()
    if name == "check_ab" and role == "judge":
        return server.check_ab(request, report).to_json()
    if name == "read" and role == "judge":
        server.read(report)
        return Done().to_json()
    if name == "judge" and role == "judge":
        return server.judge(request, report).to_json()
    if name == "facts" and role == "judge":
        return Done(facts=server.device_facts() if server.timer else None).to_json()
    if name == "prime" and role == "judge":
        server.prime(request)
        return Done().to_json()
    return failure_reply("harness_error", f"the {role} worker does not answer {name!r}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="evotui-worker")
    parser.add_argument("--role", choices=("candidate", "judge"), required=True)
    parser.add_argument("--fd", type=int, required=True)
    parser.add_argument("--device", required=True)
    args = parser.parse_args(argv)

    root = str(Path(__file__).resolve().parents[2])
    if root not in sys.path:
        sys.path.insert(0, root)
    import evotui.eval.protocol as protocol
    from evotui.eval.control import Hello, Op
    from evotui.eval.messages import failure_reply

    conn = Connection(args.fd)
    server: Any
    hello: Hello
    cache: Path | None = None  # the candidate host's compiler cache, removed on the way out
    try:
        if args.role == "candidate":
            server = CandidateHost(args.device)
            server.conn = conn
            cache = server.trusted_cache
            hello = Hello(True, os.getpid(), server.isolation.as_dict())
        else:
            from evotui.eval.judge import Judge

            server = Judge(args.device)
            hello = Hello(True, os.getpid())
    except Exception as e:  # noqa: BLE001 - report start-up failures to the pool
        protocol.send(conn, Hello(False, error=f"{type(e).__name__}: {e}").to_json())
        return 1
    protocol.send(conn, hello.to_json())

    while True:
        try:
            msg = protocol.recv(conn)
        except (EOFError, OSError):
            break
        try:
            op = Op.from_json(msg)
            if op.op == "shutdown":
                break
            reply = _answer(server, args.role, op)
        except Exception as e:  # noqa: BLE001 - a malformed op too: the pool's, not a candidate's
            reply = {**failure_reply("harness_error", f"{type(e).__name__}: {e}"),
                     "traceback": traceback.format_exc()[-4000:]}
        sys.stdout.flush()
        protocol.send(conn, reply)
        if args.role == "judge":
            server.release_memory()
    if cache is not None:
        import shutil

        shutil.rmtree(cache, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
