#!/usr/bin/env bash
# session 3, device call 4: per-run times on one GPU, scaling (cold caches), matmul param run
# with the advice library (cold-start pack, memory-k 3)
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-gpu-results}"; mkdir -p "$out"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH="$PWD:/tmp/site" PYTHONUNBUFFERED=1
python3 bench/bench_samples.py --device cuda:0 --samples add_gelu,cross_entropy --runs 7 --variants 0 \
  --out "$out/spread-cuda0" 2>&1 | grep -o '"sample": "[a-z_]*"\|"across_runs_spread_pct": [0-9.]*\|"runs_us": \[[^]]*\]'
python3 bench/bench_scaling.py --out "$out" 2>&1 | tail -6
python3 bench/bench_param_runs.py --out "$out/param-runs-memory" --iterations 64 --cap-s "${CAP:-230}" \
  --memory-k 3 --samples matmul_bias_relu 2>&1 | tee "$out/param-runs-memory.log" | grep -v "^  "
