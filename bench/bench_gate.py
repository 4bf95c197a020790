"""How many candidates per minute the device's gate lets through, for given phase durations:
the real ``DeviceGate`` and ``Gate``, with lanes whose candidates sleep where a GPU would work.

    python bench/bench_gate.py [--lanes 3 6] [--seconds 120] [--phases softmax-h200]
                               [--set alone=0.45 judge=0.25]

Each lane runs candidates back to back: a warm-up outside the gate (a fresh process compiles
and makes its first call), trials with the device shared, timed calls alone, rechecks shared
(the process then ends), the judge's request at ``DeviceGate.judging``. The durations are
those measured per softmax / GEMM evaluation on one H200 with six candidate workers
(``bench/results/h200-sandbox.md``), so the figure printed is what the gate's scheduling alone
allows with that much work; it tells gate policies apart without a GPU, and checks that the
model reproduces what the H200 measured before a policy is changed for it.
"""

from __future__ import annotations

import argparse
import threading
import time
from dataclasses import dataclass, replace

from evotui.eval.control import ALONE, SHARE
from evotui.eval.device_gate import DeviceGate
from evotui.eval.lanes import Gate, Lane


@dataclass(frozen=True)
class Phases:
    warm: float  # outside the gate
    trials: float  # shared
    alone: float  # timer + outputs + fingerprints + value-cache guard
    rechecks: float  # shared, until the candidate's process has ended
    judge: float  # the judge's request
    between: float  # the pool's own work around a request
    read: float = 0.0  # of ``judge``: reading the handed-over bytes before taking the device


PHASES = {  # seconds per evaluation, six workers on one H200 (raw/h200-judge-gate/)
    "softmax-h200": Phases(warm=1.42, trials=0.52, alone=0.79, rechecks=0.39, judge=0.46,
                           between=0.20),
    "gemm-h200": Phases(warm=2.38, trials=1.51, alone=1.45, rechecks=0.28, judge=0.76,
                        between=0.47),
}


def lane_loop(lane: Lane, p: Phases, stop: float, done: list[float], scale: float) -> None:
    while time.monotonic() < stop:
        with Gate(lane) as gate:
            time.sleep(p.warm * scale)
            gate.on_ask(SHARE)
            time.sleep(p.trials * scale)
            gate.on_ask(ALONE)
            time.sleep(p.alone * scale)
            gate.on_ask(SHARE)
            time.sleep(p.rechecks * scale)
            gate.release()
            reading = (lambda: time.sleep(p.read * scale)) if p.read else None
            with lane.gate.judging(reading=reading):
                time.sleep((p.judge - p.read) * scale)
        time.sleep(p.between * scale)
        done.append(time.monotonic())


def run(lanes: int, seconds: float, phases: Phases, scale: float) -> tuple[float, dict[str, float]]:
    gate = DeviceGate(1 << 30)
    done: list[float] = []
    start = time.monotonic()
    stop = start + seconds * scale
    threads = [threading.Thread(target=lane_loop, args=(
        Lane("cuda:0", "cuda:0", None, None, None, gate=gate, shares_device=True),  # type: ignore[arg-type]
        phases, stop, done, scale)) for _ in range(lanes)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    used = gate.usage()
    total = sum(used.values())
    steady = [t for t in done if t <= stop]
    return len(steady) / seconds * 60, {k: round(v / total, 3) for k, v in used.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lanes", type=int, nargs="+", default=[3, 6])
    ap.add_argument("--seconds", type=float, default=120.0, help="simulated device seconds")
    ap.add_argument("--phases", choices=sorted(PHASES), nargs="+", default=sorted(PHASES))
    ap.add_argument("--set", nargs="+", default=[], metavar="PHASE=SECONDS",
                    help="override phase durations (warm, trials, alone, rechecks, judge, between, "
                         "read: the judge's reading before it takes the device)")
    ap.add_argument("--scale", type=float, default=0.25,
                    help="real seconds per simulated second (the gate's overhead is negligible)")
    args = ap.parse_args()
    try:
        changes = {k: float(v) for k, v in (item.split("=", 1) for item in args.set)}
        profiles = {name: replace(PHASES[name], **changes) for name in args.phases}
    except (ValueError, TypeError) as e:
        ap.error(f"--set takes PHASE=SECONDS with a phase of {list(Phases.__annotations__)}: {e}")
    for name, phases in profiles.items():
        for lanes in args.lanes:
            per_min, used = run(lanes, args.seconds, phases, args.scale)
            print(f"{name:<13} {lanes} lanes: {per_min:5.1f} candidates/min; device held {used}")


if __name__ == "__main__":
    main()
