#!/usr/bin/env bash
# session 4, device call 2 (nvidia-h200-x2). GPU 0: the changed GPU tests, then the sample
# table (5 runs, 4 variants each) with today's anti-cheat rounds. GPU 1: the cross_entropy
# spread with 5 input sets, then 5 separate `evotui bench` processes (separate runs).
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-gpu-results}"; mkdir -p "$out"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH="$PWD:/tmp/site" PYTHONUNBUFFERED=1
(
  export CUDA_VISIBLE_DEVICES=1
  timeout 100 python3 bench/bench_samples.py --samples cross_entropy --runs 7 --variants 0 \
    --timing-sets 5 --out "$out/ce-sets5" > "$out/ce-sets5.log" 2>&1
  for i in 1 2 3 4 5; do
    timeout 60 python3 -m evotui bench sample_kernels/cross_entropy/task.py \
      sample_kernels/cross_entropy/seed.py --device cuda --json > "$out/ce-process-$i.log" 2>&1
  done
) &
export CUDA_VISIBLE_DEVICES=0
timeout 120 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_eval_gpu.py \
  -k "value or cache or perturbed" 2>&1 | tee "$out/gpu-tests.log" | tail -15
timeout 330 python3 bench/bench_samples.py --runs 5 --variants 4 --out "$out/samples" 2>&1 \
  | tee "$out/bench.log" | grep -v '^{'
wait
tail -3 "$out/ce-sets5.log"
for i in 1 2 3 4 5; do tail -1 "$out/ce-process-$i.log" | cut -c1-400; done
