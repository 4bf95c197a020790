"""Entry point of a worker process: ``python -m evotui.eval.worker --role R --fd N --device D``.

The worker talks to the pool over the inherited socket ``N`` (never over stdout, which the
pool drains and caps). Role ``candidate`` runs candidates; role ``judge`` never does.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from multiprocessing.connection import Connection
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="evotui-worker")
    parser.add_argument("--role", choices=("candidate", "judge"), required=True)
    parser.add_argument("--fd", type=int, required=True)
    parser.add_argument("--device", required=True)
    args = parser.parse_args(argv)

    root = str(Path(__file__).resolve().parents[2])
    if root not in sys.path:
        sys.path.insert(0, root)
    from evotui.eval import protocol

    conn = Connection(args.fd)
    try:
        if args.role == "candidate":
            from evotui.eval.candidate_runner import CandidateRunner

            server = CandidateRunner(args.device)
        else:
            from evotui.eval.judge import Judge

            server = Judge(args.device)
    except Exception as e:  # noqa: BLE001 - report start-up failures to the pool
        protocol.send(conn, {"ready": False, "error": f"{type(e).__name__}: {e}"})
        return 1
    protocol.send(conn, {"ready": True, "pid": os.getpid()})

    while True:
        try:
            msg = protocol.recv(conn)
        except (EOFError, OSError):
            return 0
        op = msg.get("op")
        try:
            if op == "shutdown":
                return 0
            if op == "ping":
                reply = {"ok": True}
            elif op == "evaluate" and args.role == "candidate":
                reply = server.evaluate(msg["request"])
            elif op == "compare" and args.role == "candidate":
                reply = server.compare(msg["request"])
            elif op == "check_ab" and args.role == "judge":
                reply = server.check_ab(msg["request"], msg["report"])
            elif op == "judge" and args.role == "judge":
                reply = server.judge(msg["request"], msg["report"])
            elif op == "facts" and args.role == "judge":
                reply = {"ok": True, "facts": server.device_facts() if server.timer else None}
            else:
                reply = {"ok": False, "reason": "harness_error", "message": f"unknown op {op!r}"}
        except Exception as e:  # noqa: BLE001
            reply = {"ok": False, "accepted": False, "reason": "harness_error",
                     "message": f"{type(e).__name__}: {e}",
                     "traceback": traceback.format_exc()[-4000:]}
        sys.stdout.flush()
        protocol.send(conn, reply)


if __name__ == "__main__":
    sys.exit(main())
