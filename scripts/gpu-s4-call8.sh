#!/usr/bin/env bash
# session 4, last device call (one H200): the graph path with the read flush on a tiny call,
# then every seed 5 times (acceptance and run-to-run spread after the flush/lead change).
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-gpu-results}"; mkdir -p "$out"
export PYTHONPATH="$PWD" PYTHONUNBUFFERED=1
timeout 30 python3 -c '
import torch
from evotui.eval.timing import CudaTimer
t = CudaTimer(torch.device("cuda")); x = torch.ones(1024, device="cuda")
r = t.time(lambda: x.add_(1)); print("tiny call:", r.method, round(r.median_ms * 1000, 2), "us")' 2>&1 | tail -3
timeout 215 python3 bench/bench_samples.py --runs 5 --variants 0 --out "$out" 2>&1 | tee "$out/bench.log" | grep -v '^{'
