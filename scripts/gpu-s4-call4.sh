#!/usr/bin/env bash
# session 4, device calls 3 and 4 (one H200; call 3 ran the tests with a narrower -k, before
# the host-lead and side-stream-guard changes): the GPU harness tests after the host-lead and
# side-stream-guard changes, the sample table, then 15 runs of the short seeds.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-gpu-results}"; mkdir -p "$out"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH="$PWD:/tmp/site" PYTHONUNBUFFERED=1
timeout 200 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_eval_gpu.py -k "not long_run" 2>&1 \
  | tee "$out/gpu-tests.log" | tail -25
timeout 250 python3 bench/bench_samples.py --runs 5 --variants 4 --out "$out/samples" 2>&1 \
  | tee "$out/bench.log" | grep -v '^{'
timeout 85 python3 bench/bench_samples.py --samples rmsnorm,layernorm,rmsnorm_fp16 --runs 15 --variants 0 \
  --out "$out/short15" 2>&1 | tee "$out/short15.log" | grep -v '^{'
for d in samples short15; do
  for f in "$out/$d"/bench_samples.*; do [ -f "$f" ] && mv "$f" "$out/$d-$(basename "$f")"; done
  rmdir "$out/$d" 2>/dev/null
done
