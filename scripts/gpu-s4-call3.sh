#!/usr/bin/env bash
# session 4, device call 3 (one H200, nothing else running): the GPU tests the value-cache
# change touches, the sample table, then 15 runs of the short seeds (spread, no false
# cached_results).
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-gpu-results}"; mkdir -p "$out"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH="$PWD:/tmp/site" PYTHONUNBUFFERED=1
timeout 170 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_eval_gpu.py \
  -k "seed or cheats or value or perturbed or coarse" 2>&1 | tee "$out/gpu-tests.log" | tail -15
timeout 260 python3 bench/bench_samples.py --runs 5 --variants 4 --out "$out/samples" 2>&1 \
  | tee "$out/bench.log" | grep -v '^{'
timeout 100 python3 bench/bench_samples.py --samples rmsnorm,layernorm,rmsnorm_fp16 --runs 15 --variants 0 \
  --out "$out/short15" 2>&1 | tee "$out/short15.log" | grep -v '^{'
# bring the tables back flat (files in sub-folders were left out of the last fetch)
for d in samples short15; do
  for f in "$out/$d"/bench_samples.*; do [ -f "$f" ] && mv "$f" "$out/$d-$(basename "$f")"; done
  rmdir "$out/$d" 2>/dev/null
done
ls -la "$out"
