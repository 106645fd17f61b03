#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, with .device/ built by
# prepare.sh: halo's plugin tests and benchmarks against XLA's CUDA plugin
# (the one in JAX's cuda13 wheel), then the same kernels in JAX Pallas.
# Logs go to $OUT (or ./gpu-out): machine.log, tests.log, bench.log,
# jax.log, summary.txt and jax/results.json, jax/lowered.txt. Every step has
# its own time limit, so one that hangs leaves time for the rest.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-gpu-out}
mkdir -p "$out"
for f in .device/*.test.gz; do [ -e "$f" ] && gunzip -f "$f" && chmod +x "${f%.gz}"; done
py=python3
[ -x /opt/torch/.venv/bin/python3 ] && py=/opt/torch/.venv/bin/python3
# HALO_PLUGIN set beforehand wins (HALO_PLUGIN=interpreter tries this
# script on a machine without a GPU, with small HALO_BENCH_SIZE).
plugin=${HALO_PLUGIN:-$($py -c 'import os, jax_plugins.xla_cuda13 as p; print(os.path.join(os.path.dirname(p.__file__), "xla_cuda_plugin.so"))')}
export HALO_PLUGIN=$plugin XLA_PYTHON_CLIENT_PREALLOCATE=false JAX_PALLAS_USE_MOSAIC_GPU=0
{
  date -u
  nvidia-smi -L || echo "no nvidia-smi"
  echo "plugin: $plugin"
  $py -c 'import jax; print("jax", jax.__version__)' || echo "no jax"
} 2>&1 | tee "$out/machine.log"

# The whole script stays within HALO_GPU_BUDGET seconds (default 420: one
# device call with timeout_s 480, leaving a session's 15 minutes room for
# the machine's start and one shorter call after): a step gets at most
# what is left, and a step with less than 15 s left is skipped, saying so.
budget=${HALO_GPU_BUDGET:-420}
step() { # step LOG SECONDS command...
  local log=$1 secs=$2
  shift 2
  local left=$((budget - SECONDS))
  if [ "$left" -lt 15 ]; then
    echo "== skipped, out of time: $*" | tee -a "$out/$log"
    return
  fi
  [ "$secs" -gt "$left" ] && secs=$left
  echo "== $* (limit ${secs}s)" | tee -a "$out/$log"
  local t0=$SECONDS
  timeout "$secs" "$@" 2>&1 | tee -a "$out/$log"
  echo "== exit ${PIPESTATUS[0]} after $((SECONDS - t0))s" | tee -a "$out/$log"
}

# Most needed first: the Pallas kernels on the GPU (checked, then timed),
# then the same kernels in JAX, then the other packages' plugin tests.
step tests.log 120 .device/pallas.test -test.run TritonRealPlugin -test.v
for t in add matmul dsd masked; do
  step tests.log 60 ".device/$t.test" -test.run OnPlugin -test.v
done
step bench.log 90 .device/dsd.test -test.run XXX -test.bench OnPlugin -test.benchtime 50x -test.count 2
step bench.log 90 .device/masked.test -test.run XXX -test.bench OnPlugin -test.benchtime 50x -test.count 2
step bench.log 90 .device/matmul.test -test.run XXX -test.bench OnPlugin -test.benchtime 50x -test.count 2
step bench.log 30 .device/add.test -test.run XXX -test.bench OnPlugin -test.benchtime 500x -test.count 2
if $py -c 'import jax' 2>/dev/null; then
  step jax.log 180 "$py" benchmarks/gpu/pallas_jax.py --out "$out/jax"
else
  echo "== JAX Pallas skipped: $py has no jax" | tee -a "$out/jax.log"
fi
step tests.log 60 .device/pjrt.test -test.run RealPlugin -test.v
step tests.log 60 .device/effects.test -test.run RealPlugin -test.v
{
  grep -h "^Benchmark\|RESULT\|FAILED\|^--- FAIL\|^FAIL\|skipped" "$out"/*.log
  echo
  $py benchmarks/gpu/compare.py "$out"
} > "$out/summary.txt" 2>&1
cat "$out/summary.txt"
