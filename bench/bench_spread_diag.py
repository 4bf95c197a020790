"""What moves a short kernel's time from one evaluation to the next? Times a sample's seed
with the worker's timer (input sets rotated, perturbed before each call, L2 flushed, host
lead), "run" after "run" with an idle pause between, under a few conditions:

- ``harness``: new input sets, and between calls exactly what an evaluation does
  (``TimedCalls``: weights compared, released outputs poisoned, every value of the next set
  regenerated; short kernels were seen to move ~2 % between runs after these were added);
- ``new-inputs``: every run allocates its input sets anew (what separate evaluations do),
  one element changed between calls (the evaluator's earlier way);
- ``same-inputs``: one allocation for all runs (placement fixed);
- ``out-ring``: new inputs, and the last 4 outputs kept alive, so the candidate's output
  lands in more places within a run;
- ``warm-200ms``: new inputs, 200 ms of warm-up instead of 25 ms (clock ramp);
- ``read-flush``: new inputs, the L2 flushed by reading the buffer instead of zeroing it
  (no dirty lines left for the kernel to write back);
- ``fixed-lead``: new inputs, a 0.5 ms host lead instead of one measured each run;
- ``read-flush+fixed-lead``: both.

Prints each run's median and per-set medians, the SM clock before and after (nvidia-smi),
and each condition's (max - min) / median across runs. The candidate runs in this process
without the harness's sandbox: this is a measurement tool, not an evaluation.

    python bench/bench_spread_diag.py rmsnorm layernorm [--runs 10] [--pause 0.5]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evotui.eval.perturb import perturb, write_quietly  # noqa: E402
from evotui.eval.timed_calls import TimedCalls  # noqa: E402
from evotui.eval.timing import CudaTimer  # noqa: E402
from evotui.task.model import load_module, make_init_inputs, make_inputs, resolve_task  # noqa: E402

CONDITIONS = ("harness", "new-inputs", "same-inputs", "out-ring", "warm-200ms", "read-flush", "fixed-lead",
              "read-flush+fixed-lead")


def sm_clock() -> str:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm", "--format=csv,noheader,nounits",
                              "-i", "0"], capture_output=True, text=True, timeout=10)
        return out.stdout.strip() or "?"
    except (OSError, subprocess.SubprocessError):
        return "?"


def timer_for(name: str, device) -> CudaTimer:
    timer = CudaTimer(device)
    if "read-flush" in name:
        buf = timer.flush_buf
        timer.flush = lambda: buf.sum()
    if "fixed-lead" in name:
        timer.lead_ms = lambda fn, prepare=None, calls=5: 0.5
    return timer


def time_one_run(name: str, model, sets: list, seeds: list[int], timer: CudaTimer):
    """One evaluation's timing, as the worker does it (rotation, perturbation, flush, lead)."""
    ring: list = []
    state = {"calls": 0, "perturbed": [0] * len(sets)}

    def prepare() -> None:
        k = state["calls"] % len(sets)
        perturb(sets[k], seeds[k], state["perturbed"][k])
        state["perturbed"][k] += 1

    def call() -> None:
        k = state["calls"] % len(sets)
        state["calls"] += 1
        ring.append(model(*sets[k]))
        del ring[:-(4 if name == "out-ring" else 1)]

    return timer.time(call, input_set=lambda: state["calls"] % len(sets), prepare=prepare,
                      warmup_ms=200.0 if name == "warm-200ms" else 25.0)


def time_one_harness_run(module, model, shape, device, sets: list, seeds: list[int],
                         timer: CudaTimer):
    """One evaluation's timing with the evaluator's own between-call work (``TimedCalls``)."""
    calls = TimedCalls(model, sets, seeds, judge_every_call=False, audit_seed=seeds[0],
                       dump=lambda values, prefix: [],
                       refill=lambda values, seed: write_quietly(
                           values, make_inputs(module, shape, seed, device)))
    timing = timer.time(calls.call, input_set=calls.next_set, prepare=calls.prepare,
                        input_sets=len(sets))
    calls.finish()
    return timing


def run_condition(name: str, module, model, shape, device, runs: int, pause: float,
                  sets_n: int = 3) -> list[float]:
    import torch

    timer = timer_for(name, device)
    fixed: list | None = None
    medians = []
    for r in range(runs):
        seeds = [1000 * r + k + 1 for k in range(sets_n)]
        if name == "same-inputs":
            fixed = fixed or [make_inputs(module, shape, s, device) for s in seeds]
            sets = fixed
        else:
            sets = [make_inputs(module, shape, s, device) for s in seeds]
        torch.cuda.synchronize(device)
        time.sleep(pause)
        before = sm_clock()
        if name == "harness":
            timing = time_one_harness_run(module, model, shape, device, sets, seeds, timer)
        else:
            timing = time_one_run(name, model, sets, seeds, timer)
        after = sm_clock()
        medians.append(timing.median_ms * 1000)
        sets_us = ", ".join(f"{m * 1000:.2f}" for m in timing.set_medians_ms)
        print(f"  {name:22s} run {r:2d}: {timing.median_ms * 1000:8.2f} µs  sets [{sets_us}]  "
              f"SM clock {before} -> {after} MHz", flush=True)
    return medians


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("samples", nargs="+")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--pause", type=float, default=0.5, help="idle seconds before each run")
    ap.add_argument("--conditions", default=",".join(CONDITIONS))
    args = ap.parse_args()
    import torch

    device = torch.device("cuda:0")
    summary = ["| sample | condition | runs | median µs | spread across runs |", "|---|---|---|---|---|"]
    for sample in args.samples:
        task = resolve_task(ROOT / "sample_kernels" / sample)
        shape = task.shapes("cuda")[0]
        module = load_module(task.path, f"diag_task_{sample}")
        spec = importlib.util.spec_from_file_location(f"diag_{sample}", task.seed_path)
        seed_module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(seed_module)
        torch.manual_seed(0)
        with torch.device(device):
            model = seed_module.ModelNew(*make_init_inputs(module, shape)).to(device)
        print(f"{sample}:", flush=True)
        for name in args.conditions.split(","):
            medians = run_condition(name, module, model, shape, device, args.runs, args.pause)
            mid = statistics.median(medians)
            summary.append(f"| {sample} | {name} | {len(medians)} | {mid:.2f} "
                           f"| {100 * (max(medians) - min(medians)) / mid:.2f} % |")
    print("\n".join(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
