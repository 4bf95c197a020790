#!/usr/bin/env bash
# session 3, device call 2: matmul TMA check + spread on one GPU (in parallel), then param runs
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-gpu-results}"; mkdir -p "$out"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH="$PWD:/tmp/site" PYTHONUNBUFFERED=1
python3 bench/bench_configs.py matmul_bias_relu "TMA_MODE=1" "TMA_MODE=2" \
  "BLOCK_N=256,BLOCK_K=64,NUM_WARPS=8" "TMA_MODE=1,BLOCK_N=256,BLOCK_K=64,NUM_WARPS=8" \
  "TMA_MODE=2,BLOCK_N=256,BLOCK_K=64,NUM_WARPS=8" "TMA_MODE=2,BLOCK_N=256,BLOCK_K=64,NUM_WARPS=8,NUM_STAGES=4" \
  --device cuda:0 --out "$out" > "$out/configs.log" 2>&1 &
python3 bench/bench_samples.py --device cuda:1 --samples add_gelu,cross_entropy,softmax --runs 7 --variants 0 \
  --out "$out/spread-cuda1" > "$out/spread.log" 2>&1 &
wait
tail -12 "$out/configs.log"; tail -8 "$out/spread.log"
python3 bench/bench_param_runs.py --out "$out/param-runs" --iterations 64 --cap-s "${CAP:-80}" \
  --samples "${SAMPLES:-add_gelu,cross_entropy,layernorm,rmsnorm,row_sum,softmax}" 2>&1 \
  | tee "$out/param-runs.log" | grep -v "^  "
