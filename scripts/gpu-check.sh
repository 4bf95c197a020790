#!/usr/bin/env bash
# Everything that needs the GPU, in one call: the GPU tests, then the sample benchmark, then
# (PARAM_RUNS=1) the param-mutator search on every sample.
# Results go to $OUT (or ./gpu-results). Runs with what the lent machine has (torch, triton,
# numpy, click, rich, pytest); no installs.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-gpu-results}"
mkdir -p "$out"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv | tee "$out/nvidia-smi-before.csv"
python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__, "gpus", torch.cuda.device_count())'
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_eval_gpu.py tests/test_cuda_gpu.py ${PYTEST_ARGS:-} 2>&1 | tee "$out/gpu-tests.log"
fi
if [ "${SKIP_BENCH:-0}" != 1 ]; then
  python3 bench/bench_samples.py --out "$out" ${BENCH_ARGS:-} 2>&1 | tee "$out/bench.log"
fi
if [ "${PARAM_RUNS:-0}" = 1 ]; then
  python3 bench/bench_param_runs.py --out "$out/param-runs" ${PARAM_ARGS:-} 2>&1 | tee "$out/param-runs.log"
fi
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv | tee "$out/nvidia-smi-after.csv"
