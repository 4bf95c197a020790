#!/usr/bin/env bash
# session 5, device call 3 (one H200): the GPU tests of the A/B's rotating input sets and the
# poisoned releases, then the spread of the >= 100 us seeds that missed 0.5 % in session 4,
# each run in new processes (as separate `evotui bench` commands).
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-gpu-results}"; mkdir -p "$out"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH="$PWD:/tmp/site" PYTHONUNBUFFERED=1
timeout 220 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_eval_gpu.py tests/test_cuda_gpu.py \
  -k "earlier_answer or state_left or ab_ or comparison or gpu_cheats_are_rejected or counter_past" 2>&1 \
  | tee "$out/gpu-tests.log" | tail -30
timeout 330 python3 bench/bench_samples.py --fresh-pool --runs 5 --variants 0 \
  --samples "${FRESH_SAMPLES:-add_gelu,cross_entropy}" --out "$out/fresh" 2>&1 | tee "$out/fresh-pool.log" | grep -v '^{'
for f in "$out"/fresh/*; do [ -f "$f" ] && mv "$f" "$out/fresh-pool-$(basename "$f")"; done
rmdir "$out/fresh" 2>/dev/null; true
