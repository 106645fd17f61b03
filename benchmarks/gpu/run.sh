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
# The binaries are unpacked into a scratch folder: .device/ stays as
# prepare.sh left it (unpacked it would pass what the device tool carries).
bin=$(mktemp -d "${TMPDIR:-/tmp}/halo-bin.XXXXXX")
trap 'rm -rf "$bin"' EXIT
for f in .device/*.test.gz; do
  [ -e "$f" ] || continue
  name=$(basename "${f%.gz}")
  gunzip -c "$f" >"$bin/$name" && chmod +x "$bin/$name"
done
py=python3
[ -x /opt/torch/.venv/bin/python3 ] && py=/opt/torch/.venv/bin/python3
# HALO_PLUGIN set beforehand wins (HALO_PLUGIN=interpreter tries this
# script on a machine without a GPU, with small HALO_BENCH_SIZE).
plugin=${HALO_PLUGIN:-$(timeout -k 5 60 $py -c 'import os, jax_plugins.xla_cuda13 as p; print(os.path.join(os.path.dirname(p.__file__), "xla_cuda_plugin.so"))')}
if [ -z "$plugin" ] || { [ "$plugin" != interpreter ] && [ ! -f "$plugin" ]; }; then
  # Every plugin test would skip and report PASS: stop instead.
  echo "no PJRT plugin: HALO_PLUGIN is unset and JAX's xla_cuda13 plugin was not found (got \"$plugin\")" | tee "$out/machine.log"
  exit 1
fi
# Both sides use XLA's default allocator (BFC, 75% of the GPU taken at
# start), so their timings compare the same way of allocating results.
export HALO_PLUGIN=$plugin JAX_PALLAS_USE_MOSAIC_GPU=0
# What JAX's Python side does before it loads the plugin, done here for
# the Go binaries too: the CUDA libraries of the nvidia-* wheels on the
# library path, and XLA told where CUDA's libdevice and ptxas are (the
# directory JAX itself finds, else the first that holds libdevice).
if [ -f "$plugin" ]; then
  site=$(dirname "$(dirname "$(dirname "$plugin")")")
  libs=$(find "$site/nvidia" -maxdepth 3 -type d -name lib 2>/dev/null | sort | tr '\n' ':')
  export LD_LIBRARY_PATH=${libs}${LD_LIBRARY_PATH:-}
  cuda=$($py -c 'from jax._src import lib; print(getattr(lib, "cuda_path", "") or "")' 2>/dev/null)
  if [ -z "$cuda" ]; then
    for d in "$site/nvidia/cu13" "$site/nvidia/cuda_nvcc" /usr/local/cuda; do
      if ls "$d"/nvvm/libdevice/libdevice*.bc >/dev/null 2>&1; then cuda=$d; break; fi
    done
  fi
  [ -d "$cuda" ] && export XLA_FLAGS="--xla_gpu_cuda_data_dir=$cuda ${XLA_FLAGS:-}"
fi
{
  date -u
  echo "build: $(cat .device/VERSION 2>/dev/null || echo unknown)"
  timeout -k 5 60 nvidia-smi -L || echo "no nvidia-smi"
  echo "plugin: $plugin"
  timeout -k 5 60 $py -c 'import jax; print("jax", jax.__version__, jax.devices())' || echo "no jax"
  echo "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
  echo "XLA_FLAGS=${XLA_FLAGS:-}"
  [ -f "$plugin" ] && { ldd "$plugin" | grep -i "not found" || echo "ldd: every library found"; }
} 2>&1 | tee "$out/machine.log"

# The whole script stays within HALO_GPU_BUDGET seconds (default 430: one
# device call with timeout_s 480, leaving a session's 15 minutes room for
# the machine's start and one shorter call after): a step gets at most
# what is left, and a step with less than 15 s left is skipped, saying so.
budget=${HALO_GPU_BUDGET:-430}
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
  timeout -k 10 "$secs" "$@" 2>&1 | tee -a "$out/$log"
  echo "== exit ${PIPESTATUS[0]} after $((SECONDS - t0))s" | tee -a "$out/$log"
}

# gotest LOG SECONDS BINARY PATTERN: a test binary's tests matching
# PATTERN, verbose. When the process dies (a signal, as when a compiler in
# the plugin aborts), the test it was in is reported and the rest run
# again without it, while time is left (at most three times).
gotest() {
  local log=$1 secs=$2 exe=$3 pat=$4 skip="" names="" tries
  for tries in 1 2 3 4; do
    local start
    start=0; [ -f "$out/$log" ] && start=$(wc -l <"$out/$log")
    # -test.timeout, a little inside the step's limit: a hung test panics
    # naming itself (exit 2), and the rest run again without it.
    local left=$((budget - SECONDS)) lim=$secs
    [ "$lim" -gt "$left" ] && lim=$left
    step "$log" "$secs" "$exe" -test.run "$pat" ${skip:+-test.skip "$skip"} -test.v -test.timeout "$((lim > 10 ? lim - 5 : lim))s"
    local rc
    rc=$(tail -1 "$out/$log" | sed -n 's/^== exit \([0-9]*\) after.*/\1/p')
    case $rc in 0 | 1 | 124 | "") return ;; esac
    local last
    last=$(tail -n +$((start + 1)) "$out/$log" | grep '^=== RUN' | tail -1 | awk '{print $3}')
    [ -z "$last" ] && return
    echo "== CRASHED (exit $rc) in $last; again without it" | tee -a "$out/$log"
    names="$names $last"
    # One pattern per level, the names' elements level by level, down to
    # the shallowest name's depth (Go skips a name only when every level
    # of the pattern matches one of its levels). It can skip more than the
    # crashed tests (their elements' combinations), never less.
    skip=$(for n in $names; do echo "$n"; done | awk -F/ '{names[NR] = $0; if (NR == 1 || NF < d) d = NF} END {for (r = 1; r <= NR; r++) {k = split(names[r], el, "/"); for (i = 1; i <= d; i++) {e = el[i]; gsub(/[][().*+?^$|{}\\]/, "\\\\&", e); if (!seen[i, e]++) lv[i] = lv[i] (lv[i] == "" ? "" : "|") e}} for (i = 1; i <= d; i++) printf "%s^(%s)$", (i > 1 ? "/" : ""), lv[i]}')
  done
}

# The sweeps of Triton settings timed on both sides (plugintest.Configs'
# syntax); HALO_DSD_CONFIGS and HALO_MASKED_CONFIGS set beforehand win.
# The defaults: the fastest of the H100 runs of 2026-11-27
# (docs/gpu-validation.md), and one many-tile DSD form (slower there) to
# follow.
dsd_configs=${HALO_DSD_CONFIGS:-"bn=128,bk=32,warps=4,stages=6 bn=128,bk=64,warps=4,stages=3 bn=128,bk=64,warps=4,stages=4 bn=256,bk=64,warps=8,stages=3 bn=128,bk=64,warps=4,stages=4,tiles=8,order=1"}
masked_configs=${HALO_MASKED_CONFIGS:-"bm=128,bn=256,bk=64,warps=8,stages=3,group=8 bm=128,bn=256,bk=64,warps=8,stages=4,group=8 bm=128,bn=256,bk=64,warps=8,stages=4,group=4"}

# Most needed first: the examples' kernels on the GPU (checked), the
# Pallas test kernels, the other packages' plugin tests, then the timings
# on both sides.
# HALO_GPU_PROFILE=only: the profile alone (no tests, timings or JAX).
# HALO_GPU_TESTS=quick: of the tests, only the examples', the
# hand-written Pallas kernels and the bounds checks on the GPU (a timing
# call after a full one).
if [ "${HALO_GPU_PROFILE:-}" != only ]; then
  for t in add matmul dsd masked attention ssm quant; do
    gotest tests.log 60 "$bin/$t.test" OnPlugin
  done
  # 75 kernels on 2026-11-28 (eleventh session), over twice the 34 the 60 s were first set for.
  gotest tests.log 120 "$bin/pallas.test" 'TritonRealPlugin/triton/'
  # tt.print's lines, read from the process's standard output (2026-11-28, not yet run).
  gotest tests.log 30 "$bin/pallas.test" 'DebugPrintRealPlugin'
  # Alone in its process: interpret mode's checks without Register (the
  # handler Client.Compile registers because pallas declares it), then
  # the same kernels serialized and loaded in a fresh child process
  # (DeserializeAndLoad registers it).
  gotest tests.log 30 "$bin/pallas.test" 'BoundsChecksDeclaredRealPlugin'
  gotest tests.log 40 "$bin/pallas.test" 'BoundsChecksDeserializedRealPlugin'
  if [ "${HALO_GPU_TESTS:-}" != quick ]; then
    gotest tests.log 80 "$bin/pallas.test" 'TritonRealPlugin/interpret/'
    # 200 random kernels (ops, types and casts the hand-written ones lack)
    gotest tests.log 60 "$bin/pallas.test" 'TritonRandomKernelsRealPlugin'
    gotest tests.log 30 "$bin/pjrt.test" RealPlugin
    gotest tests.log 30 "$bin/effects.test" RealPlugin
  fi
fi
# HALO_GPU_BENCH=0: the tests alone (a check of a final build).
if [ "${HALO_GPU_PROFILE:-}" != only ] && [ "${HALO_GPU_BENCH:-}" != 0 ]; then
  # -test.v: configs a size cannot take are skipped saying why.
  step bench.log 30 "$bin/pjrt.test" -test.run XXX -test.bench AwaitOnPlugin -test.benchtime 200x -test.v
  # One process a config: a config whose compilation kills the process
  # (an abort in Triton's passes) costs only itself.
  for cf in $dsd_configs; do
    step bench.log 40 env HALO_BENCH_CONFIGS="$cf" "$bin/dsd.test" -test.run XXX -test.bench DSDOnPlugin -test.benchtime 100x -test.v
  done
  for cf in $masked_configs; do
    step bench.log 40 env HALO_BENCH_CONFIGS="$cf" "$bin/masked.test" -test.run XXX -test.bench OnPlugin -test.benchtime 100x -test.v
  done
  # HALO_DSD_BLOCK2: a second DSD sweep, on both sides, over sparse blocks
  # of that size (the seed's 512 of 16384 is 256 of 8192), with
  # HALO_DSD_CONFIGS2; its names start blk<size>_.
  dsd_block2=${HALO_DSD_BLOCK2:-}
  dsd_configs2=${HALO_DSD_CONFIGS2:-"bm=128,bn=128,bk=64,warps=4,stages=4 bm=128,bn=128,bk=64,warps=4,stages=3 bm=128,bn=256,bk=64,warps=8,stages=3"}
  if [ -n "$dsd_block2" ]; then
    step bench.log 90 env HALO_DSD_BLOCK="$dsd_block2" HALO_BENCH_CONFIGS="$dsd_configs2" "$bin/dsd.test" -test.run XXX -test.bench DSDOnPlugin -test.benchtime 100x -test.v
  fi
  step bench.log 30 "$bin/add.test" -test.run XXX -test.bench OnPlugin -test.benchtime 1000x -test.v
  # The flash-attention kernel against XLA's dense attention (JAX's own
  # Pallas flash attention is its twin in pallas_jax.py).
  step bench.log 40 "$bin/attention.test" -test.run XXX -test.bench OnPlugin -test.benchtime 50x -test.v
  jax_kernels=${HALO_JAX_KERNELS:-xla_add,add,dsd,masked_matmul,attention,matmul_gelu}
  if [ -z "${HALO_SKIP_MATMUL:-}" ]; then
    step bench.log 40 "$bin/matmul.test" -test.run XXX -test.bench OnPlugin -test.benchtime 100x -test.v
  elif [ -z "${HALO_JAX_KERNELS:-}" ]; then
    jax_kernels=xla_add,add,dsd,masked_matmul,attention # matmul's JAX twin compiles for half a minute
  fi
  if timeout -k 5 60 $py -c 'import jax' 2>/dev/null; then
    step jax.log 150 env PYTHONUNBUFFERED=1 "$py" benchmarks/gpu/pallas_jax.py --out "$out/jax" \
      --kernels "$jax_kernels" \
      --dsd-configs "$dsd_configs" --masked-configs "$masked_configs" \
      --size "${HALO_BENCH_SIZE:-8192}" --matmul-size "${HALO_BENCH_SIZE:-4096}" \
      --block "${HALO_BENCH_BLOCK:-128}" --bk "${HALO_BENCH_BK:-64}" \
      --dsd-block "${HALO_DSD_BLOCK:-${HALO_BENCH_BLOCK:-128}}" \
      --attn-seq "${HALO_ATTN_SEQ:-2048}" --attn-block "${HALO_ATTN_BLOCK:-64}"
    if [ -n "$dsd_block2" ]; then
      step jax2.log 90 env PYTHONUNBUFFERED=1 "$py" benchmarks/gpu/pallas_jax.py --out "$out/jax2" \
        --kernels dsd --dsd-configs "$dsd_configs2" --size "${HALO_BENCH_SIZE:-8192}" \
        --block "${HALO_BENCH_BLOCK:-128}" --bk "${HALO_BENCH_BK:-64}" --dsd-block "$dsd_block2"
    fi
  else
    echo "== JAX Pallas skipped: $py has no jax" | tee -a "$out/jax.log"
  fi
fi
# HALO_GPU_PROFILE=1 (or only): Nsight Compute's speed-of-light,
# occupancy, launch, memory, warp-state and scheduler sections of one
# launch of the DSD kernel for each config of HALO_GPU_PROFILE_CONFIGS
# (default: the first of the DSD sweep), to see where its time goes. The
# plugin allocates each buffer as asked (allocator=platform), so that
# ncu's replays do not save and restore the 75% of the GPU XLA's BFC
# allocator takes.
if [ -n "${HALO_GPU_PROFILE:-}" ]; then
  ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  if [ -n "$ncu" ]; then
    for cf in ${HALO_GPU_PROFILE_CONFIGS:-${dsd_configs%% *}}; do
      step profile.log 90 "$ncu" --target-processes all --kernel-name regex:dsd --launch-skip 1 --launch-count 1 \
        --section SpeedOfLight --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis \
        --section WarpStateStats --section SchedulerStats \
        env HALO_PLUGIN_OPTIONS=allocator=platform,preallocate=false HALO_BENCH_CONFIGS="$cf" "$bin/dsd.test" \
        -test.run XXX -test.bench OnPlugin -test.benchtime 1x
    done
  else
    echo "== profile skipped: no ncu found" | tee -a "$out/profile.log"
  fi
fi
{
  grep -h "^Benchmark\|RESULT\|FAILED\|CRASHED\|^ *--- FAIL\|^ *--- SKIP\|^FAIL\|skipped" "$out"/*.log
  echo
  $py benchmarks/gpu/compare.py "$out"
} > "$out/summary.txt" 2>&1
cat "$out/summary.txt"
