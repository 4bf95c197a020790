#!/usr/bin/env bash
# session 4, device call 1: the GPU tests (first run of the session-3 anti-cheat work on a GPU),
# then the cross_entropy spread diagnosis (7 runs, per-set medians) on one GPU.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-gpu-results}"; mkdir -p "$out"
SKIP_BENCH=1 OUT="$out" bash scripts/gpu-check.sh
export PYTHONPATH="$PWD:/tmp/site" PYTHONUNBUFFERED=1
timeout 150 python3 bench/bench_samples.py --samples cross_entropy --runs 7 --variants 0 \
  --out "$out/ce-spread" 2>&1 | tee "$out/ce-spread.log"
