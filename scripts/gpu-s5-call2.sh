#!/usr/bin/env bash
# session 5, device call 2 (one H200): the GPU tests after poisoning released outputs and
# perturbing the A/B's inputs; then the two tests of that change with the previous code
# (.diag/old, carried) to show they fail without it.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-gpu-results}"; mkdir -p "$out"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH="$PWD:/tmp/site" PYTHONUNBUFFERED=1
timeout 420 python3 -m pytest -m gpu -q -p no:cacheprovider --durations=12 tests/test_eval_gpu.py \
  tests/test_cuda_gpu.py -k "not long_run" 2>&1 | tee "$out/gpu-tests.log" | tail -40
if [ -d .diag/old ]; then
  cp .diag/old/*.py evotui/eval/
  timeout 120 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_eval_gpu.py tests/test_cuda_gpu.py \
    -k "earlier_answer or output_block_holding" 2>&1 | tee "$out/gpu-tests-old-code.log" | tail -15
  git checkout -q -- evotui/eval/ 2>/dev/null || true
fi
