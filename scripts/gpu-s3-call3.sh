#!/usr/bin/env bash
# session 3, device call 3: spread of chosen configs (one GPU each, in parallel), then the
# matmul param run (64 evaluations)
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-gpu-results}"; mkdir -p "$out"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH="$PWD:/tmp/site" PYTHONUNBUFFERED=1
python3 bench/bench_configs.py cross_entropy "ONE_PASS=1,NUM_WARPS=8" "ONE_PASS=1,NUM_WARPS=16" --runs 5 \
  --device cuda:0 --out "$out" > "$out/configs-ce.log" 2>&1 &
python3 bench/bench_configs.py matmul_bias_relu "TMA_MODE=2,BLOCK_N=256,BLOCK_K=64,NUM_WARPS=8" --runs 5 \
  --device cuda:1 --out "$out" > "$out/configs-mm.log" 2>&1 &
wait
tail -5 "$out/configs-ce.log"; tail -4 "$out/configs-mm.log"
python3 bench/bench_param_runs.py --out "$out/param-runs" --iterations 64 --cap-s "${CAP:-330}" \
  --samples matmul_bias_relu 2>&1 | tee "$out/param-runs.log" | grep -v "^  "
