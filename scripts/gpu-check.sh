#!/usr/bin/env bash
# Everything that needs the GPU, in one call: the GPU tests, then the sample benchmark, then
# (PARAM_RUNS=1) the param-mutator search on every sample, (PARAM_MEMORY=1) the same search
# with the advice library on (default: the GEMM only), (SCALING=1) one GPU vs all, then
# (AB_RUN=1) the advice A/B, (HANDOVER=1) the parts of one output's hand-over, (SCRUB=1) what
# the shared-memory scrub costs a timed call, (FRESH_POOL=1) the spread of the >= 100 us seeds over runs in
# new processes each (as separate `evotui bench` commands). SKIP_TESTS=1 / SKIP_BENCH=1 leave
# out the first two; SKIP_SANDBOX_BENCH=1 the two seeds judged in the sandbox first;
# PYTEST_K selects GPU tests by keyword expression, GPU_TESTS by file (default: all six files). SUITE_LISTS="a.txt b.txt" runs
# `evotui suite` over each list (SUITE_ARGS, e.g. --budget 30 --time-budget 30s), stopped as by
# Ctrl-C after SUITE_S seconds; the suite folder stays under runs/ (the same command resumes it)
# and goes to $OUT as suite-NAME.tar.gz.
# Results go to $OUT (or ./gpu-results). The harness runs with what the lent machine has
# (torch, triton, numpy, click, rich, pytest, cuda-python). The engine and the advice library
# also need ollama, tinydb and platformdirs: when a .whl/ folder of cp312 wheels is carried
# (see the device README), they are installed into /tmp/site first.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-gpu-results}"
mkdir -p "$out"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH="$PYTHONPATH:/tmp/site"
fi
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv | tee "$out/nvidia-smi-before.csv"
python3 -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__, "gpus", torch.cuda.device_count())'
# the sandbox on this machine: each part, then two seeds judged through it
uname -r | tee "$out/kernel.txt"
python3 -c 'from evotui.eval.sandbox import probe; i = probe(gpu="0"); print(i.summary()); print(i.as_dict())' \
  2>&1 | tee "$out/sandbox.txt"
if [ "${SKIP_SANDBOX_BENCH:-0}" != 1 ]; then
  for sample in ${SANDBOX_SAMPLES:-softmax matmul_bias_relu}; do
    python3 -m evotui bench "sample_kernels/$sample/task.py" "sample_kernels/$sample/seed.py" \
      --device cuda --json 2>&1 | tail -3 | tee -a "$out/sandbox-bench.log"
  done
fi
for list in ${SUITE_LISTS:-}; do
  name=$(basename "$list" .txt)
  timeout -s INT -k 30 "${SUITE_S:-500}" python3 -m evotui suite "$list" --out "runs/suite-$name" \
    ${SUITE_ARGS:-} 2>&1 | tee -a "$out/suite-$name.log"
  cp "runs/suite-$name/suite.md" "runs/suite-$name/suite.json" "$out/" 2>/dev/null
  tar -czf "$out/suite-$name.tar.gz" "runs/suite-$name"
done
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  python3 -m pytest -m gpu -q -p no:cacheprovider \
    ${GPU_TESTS:-tests/eval/test_shared_scrub.py tests/eval/test_prepared_pages.py tests/eval/test_read_ahead.py tests/eval/test_eval_gpu.py tests/dialects/test_cuda_gpu.py tests/eval/test_dask_pool.py} \
    ${PYTEST_ARGS:-} ${PYTEST_K:+-k "$PYTEST_K"} 2>&1 | tee "$out/gpu-tests.log"
fi
if [ "${SKIP_BENCH:-0}" != 1 ]; then
  python3 bench/bench_samples.py --out "$out" ${BENCH_ARGS:-} 2>&1 | tee "$out/bench.log"
fi
if [ "${FRESH_POOL:-0}" = 1 ]; then
  python3 bench/bench_samples.py --out "$out/fresh-pool" --fresh-pool --runs 5 --variants 0 \
    ${FRESH_POOL_ARGS:---samples add_gelu,cross_entropy,softmax} 2>&1 | tee "$out/fresh-pool.log"
fi
if [ "${HANDOVER:-0}" = 1 ]; then  # the parts of one output's hand-over (bench/bench_handover.py)
  python3 bench/bench_handover.py ${HANDOVER_ARGS:-} 2>&1 | tee "$out/handover.log"
fi
if [ "${SCRUB:-0}" = 1 ]; then  # what the shared-memory scrub costs a timed call (bench/bench_scrub.py)
  python3 bench/bench_scrub.py ${SCRUB_ARGS:-} 2>&1 | tee "$out/scrub.log"
fi
if [ "${PARAM_RUNS:-0}" = 1 ]; then  # PER_DEVICE="1 3": once per count of candidate workers per GPU
  for n in ${PER_DEVICE:-1}; do
    EVOTUI_CANDIDATES_PER_DEVICE=$n python3 bench/bench_param_runs.py --out "$out/param-runs-x$n" \
      ${PARAM_ARGS:-} 2>&1 | tee "$out/param-runs-x$n.log"
  done
fi
if [ "${PARAM_MEMORY:-0}" = 1 ]; then
  python3 bench/bench_param_runs.py --out "$out/param-runs-memory" --memory-k 3 \
    ${PARAM_MEMORY_ARGS:---iterations 64 --samples matmul_bias_relu} 2>&1 | tee "$out/param-runs-memory.log"
fi
if [ "${SCALING:-0}" = 1 ]; then
  python3 bench/bench_scaling.py --out "$out" ${SCALING_ARGS:-} 2>&1 | tee "$out/scaling.log"
fi
if [ "${AB_RUN:-0}" = 1 ]; then
  python3 -m evotui ab sample_kernels/rmsnorm --learn sample_kernels/rmsnorm_fp16 --device cuda \
    ${AB_ARGS:---seeds 3 --iterations 20} --out "$out/ab" 2>&1 | tee "$out/ab.log"
fi
if [ -f "$out/bench_samples.json" ]; then  # one table over everything measured above
  python3 bench/combine.py "$out" --out "$out/table.md"
fi
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,power.draw,temperature.gpu --format=csv | tee "$out/nvidia-smi-after.csv"
