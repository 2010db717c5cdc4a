#!/usr/bin/env bash
# First light on a GPU (issue 28): install, build the C++ launcher, check every library kernel
# on the GPU, measure it, run compute-sanitizer, all in one script that ends within --budget
# seconds (default 530: under 9 minutes) and writes at most 8 files, flat, to the output folder:
#
#   summary.txt        the machine (GPU, driver, CUDA, jax), each step's status and seconds,
#                      the measured figures in short
#   figures.json       every figure: roofline estimates (H100, H200), the machine's ceilings
#                      (device copy, bf16 jnp.dot), each kernel and baseline's time and rate,
#                      ratios to the best baseline and to the roofline; plus the steps
#   setup.log          the machine's tools and versions, the install, the launcher's check
#   pytest_gpu.xml     junit XML of `pytest -m gpu tests/test_kernels_gpu.py`
#   pytest_gpu.log     its output
#   bench.log          benchmarks/kernels.py --gpu: the tables; benchmarks/gemm_sweep.py (the
#                      GEMM's tile plans); ncu: the default GEMM's sections, and the device
#                      time (gpu__time_duration) and DRAM bytes of a 1 GiB copy and of one
#                      call of each ONCE kernel and of each of its baselines
#   sanitizer.log      compute-sanitizer memcheck and racecheck over one GEMM, one
#                      attention and one grouped GEMM call (or why they did not run)
#   first_failure.log  the first failed step's full output (and the first failed test's
#                      report); absent when nothing failed
#
# Usage:
#   bash benchmarks/gpu_proof.sh [--out DIR]          # on the GPU machine: DIR, else $OUT
#   bash benchmarks/gpu_proof.sh --dry-run [--skip-install] [--out DIR]
#        [--bench "NAME ..."] [--tests-k EXPR] [--budget SECONDS]
#
# After a run, here: `python benchmarks/gpu_proof.py record FILES_AT docs/gpu_runs/<gpu>-<date>.json
# COMMIT` (FILES_AT: the folder the device tool fetched the files to; COMMIT: the commit that
# ran), write the record's findings, then `python -m examples.kernels_doc --write`: the run
# becomes a part of docs/kernels.md's "Measured on a GPU".
#
# --dry-run does every step on the CPU up to its first GPU call, so a broken script costs no
# GPU time: the install (into the current environment, as on the GPU machine), the launcher's
# import, `pytest -m gpu --collect-only`, the GPU tests (each skips: no GPU) and a few of them
# run on the CPU through the interpreter (JAX_PYPTX_GPU_TESTS_ON_CPU=1, -k --tests-k), the
# benchmark with every kernel and baseline lowered for CUDA instead of timed, and the
# sanitizer's program lowered for CUDA. --skip-install leaves the environment as it is (the
# launcher must be built already); --bench limits the benchmark to entries whose name contains
# one of the words. Every step runs under `timeout`; a failed step does not stop the script.
# The exit status is 0 when every step passed (a sanitizer refused by the machine counts as
# passed, with its reason in sanitizer.log).
set -u

DRY=0
SKIP_INSTALL=0
BENCH=""
TESTS_K="hopper/rms_norm-f32 or fresh or grad"
BUDGET=530
OUT_DIR="${OUT:-}"
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) DRY=1 ;;
    --skip-install) SKIP_INSTALL=1 ;;
    --out) OUT_DIR="$2"; shift ;;
    --bench) BENCH="$2"; shift ;;
    --tests-k) TESTS_K="$2"; shift ;;
    --budget) BUDGET="$2"; shift ;;
    -h|--help) sed -n '2,40p' "$0"; exit 0 ;;
    *) echo "gpu_proof.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT" || exit 2
PY="${PYTHON:-python3}"
if [ -z "$OUT_DIR" ]; then
  if [ "$DRY" = 1 ]; then OUT_DIR="$(mktemp -d /tmp/gpu_proof_out.XXXXXX)"; else
    echo "gpu_proof.sh: no output folder: set \$OUT or pass --out DIR" >&2; exit 2; fi
fi
mkdir -p "$OUT_DIR"
OUT_DIR="$(cd "$OUT_DIR" && pwd)"
WORK="$(mktemp -d /tmp/gpu_proof_work.XXXXXX)"
STEPS="$WORK/steps.tsv"
: > "$STEPS"
START=$(date +%s)
DEADLINE=$((START + BUDGET))

export PYTHONPATH="$ROOT${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
export XLA_PYTHON_CLIENT_PREALLOCATE=false   # pytest workers, torch and the benchmark share
export JAX_PYPTX_CACHE_DIR="${JAX_PYPTX_CACHE_DIR:-$WORK/cubin-cache}"
# ptxas (the toolchain compiles PTX with it) and compute-sanitizer from the CUDA toolkit
for d in /usr/local/cuda/bin /usr/local/cuda/compute-sanitizer /opt/cuda/bin; do
  [ -d "$d" ] && case ":$PATH:" in *":$d:"*) ;; *) PATH="$PATH:$d" ;; esac
done
export PATH

# step NAME LIMIT RESERVE GROUP CMD...: run CMD under timeout (LIMIT seconds, less where the
# budget left minus RESERVE, kept for the later steps, is smaller); its output goes to
# $WORK/NAME.log, then to $OUT_DIR/GROUP; one line per step to $STEPS.
step() {
  local name=$1 limit=$2 reserve=$3 group=$4
  shift 4
  local log="$WORK/$name.log" now left rc status t0 dt
  now=$(date +%s)
  left=$((DEADLINE - now - reserve))
  [ "$left" -lt "$limit" ] && limit=$left
  if [ "$limit" -lt 5 ]; then
    echo "no time left in the ${BUDGET}s budget" > "$log"
    printf '%s\t%s\t%s\t%s\t%s\n' "$name" "skipped: no time" 0 "$log" "$group" >> "$STEPS"
    echo "--- $name: skipped (no time left)"
    return 1
  fi
  echo "=== $name (limit ${limit}s): $*" >> "$OUT_DIR/$group"
  t0=$(date +%s.%N)
  timeout --kill-after=10 "$limit" "$@" > "$log" 2>&1
  rc=$?
  dt=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b - a}')
  case $rc in
    0) status=ok ;;
    124|137) status="timeout ${limit}s" ;;
    *) status="failed rc=$rc" ;;
  esac
  if [ "$rc" != 0 ] && [ "${REFUSAL_OK:-0}" = 1 ] && grep -qiE \
      "device not supported|not supported on this|unable to (start|initialize)|error 999|permission denied|LibraryNotLoaded" "$log"; then
    status="refused"
    rc=0
  fi
  cat "$log" >> "$OUT_DIR/$group"
  echo "=== $name: $status (${dt}s)" >> "$OUT_DIR/$group"
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$status" "$dt" "$log" "$group" >> "$STEPS"
  echo "--- $name: $status (${dt}s)"
  return $rc
}

skip() {  # skip NAME GROUP REASON
  echo "=== $1: skipped: $3" >> "$OUT_DIR/$2"
  printf '%s\t%s\t%s\t%s\t%s\n' "$1" "skipped" 0 "" "$2" >> "$STEPS"
  echo "--- $1: skipped ($3)"
}

machine() {
  echo "date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
  echo "mode: $([ "$DRY" = 1 ] && echo dry-run || echo gpu)"
  echo "host: $(uname -srm)"
  if command -v nvidia-smi >/dev/null; then
    echo "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader 2>&1 | head -1)"
    echo "cuda (driver): $(nvidia-smi 2>/dev/null | grep -o 'CUDA Version: [0-9.]*' | head -1)"
  else
    echo "gpu: none (no nvidia-smi)"
  fi
  echo "nvcc: $(command -v nvcc >/dev/null && nvcc --version | grep -o 'release [0-9.]*' || echo none)"
  echo "ptxas: $(command -v ptxas >/dev/null && ptxas --version | grep -o 'release [0-9.]*' || echo none)"
  if command -v compute-sanitizer >/dev/null; then
    echo "compute-sanitizer: $(compute-sanitizer --version 2>&1 | grep -io 'version [0-9.]*' | head -1)"
  else
    echo "compute-sanitizer: none"
  fi
  echo "python: $("$PY" -c 'import sys; print(sys.version.split()[0], sys.executable)' 2>&1)"
  "$PY" - <<'EOF' 2>&1
import importlib
for m in ("jax", "jaxlib", "numpy", "ml_dtypes", "nanobind", "scikit_build_core", "torch",
          "pytest", "xdist", "pytest_timeout"):
    try:
        v = getattr(importlib.import_module(m), "__version__", "?")
    except Exception as e:  # noqa: BLE001
        v = f"missing ({type(e).__name__})"
    print(f"{m}: {v}")
EOF
}

echo "gpu_proof: $([ "$DRY" = 1 ] && echo 'dry run' || echo 'GPU run') in $ROOT; output to $OUT_DIR; budget ${BUDGET}s"
step env 30 0 setup.log bash -c "$(declare -f machine); DRY=$DRY PY='$PY' machine" && \
  cp "$WORK/env.log" "$WORK/env.txt"

# ---- install the package (no network) and build ffi/ (scikit-build-core, in place)
if [ "$SKIP_INSTALL" = 1 ]; then
  skip install setup.log "--skip-install"
elif ! step install 180 300 setup.log "$PY" -m pip install --no-deps --no-build-isolation \
    --no-index -e .; then
  # the same CMake build without pip: the modules land in build/, copied into the package
  step cmake 150 280 setup.log bash -c "cmake -S . -B build/gpu-proof -G Ninja \
      -DPython_EXECUTABLE=\"\$(command -v '$PY')\" && cmake --build build/gpu-proof && \
      cp build/gpu-proof/_ffi*.so jax_pyptx/ && cp build/gpu-proof/_arith*.so jax_pyptx/interpret/state/"
fi
DRYFLAG=""
[ "$DRY" = 1 ] && DRYFLAG="--dry-run"
step ffi 60 280 setup.log "$PY" benchmarks/gpu_proof.py ffi $DRYFLAG

# ---- pytest -m gpu
XML="$OUT_DIR/pytest_gpu.xml"
if [ "$DRY" = 1 ]; then
  step collect 60 60 pytest_gpu.log env JAX_PLATFORMS=cpu "$PY" -m pytest -m gpu --collect-only \
    -q -p no:cacheprovider tests/test_kernels_gpu.py
  step pytest 90 60 pytest_gpu.log env JAX_PLATFORMS=cpu "$PY" -m pytest -m gpu -q -rs \
    -p no:cacheprovider --junitxml="$XML" tests/test_kernels_gpu.py
  step pytest-cpu 120 60 pytest_gpu.log env JAX_PLATFORMS=cpu JAX_PYPTX_GPU_TESTS_ON_CPU=1 \
    "$PY" -m pytest -m gpu -q -rs -p no:cacheprovider -k "$TESTS_K" tests/test_kernels_gpu.py
else
  EXTRA=()
  "$PY" -c "import xdist" 2>/dev/null && EXTRA+=(-n 4)
  "$PY" -c "import pytest_timeout" 2>/dev/null && EXTRA+=(--timeout=150)
  step pytest 200 200 pytest_gpu.log env JAX_PLATFORMS=cuda,cpu JAX_PYPTX_REQUIRE_GPU=1 "$PY" -m pytest -m gpu -q \
    -rfEs -p no:cacheprovider --junitxml="$XML" ${EXTRA[@]+"${EXTRA[@]}"} tests/test_kernels_gpu.py
fi

# ---- the benchmark
# shellcheck disable=SC2086
if [ "$DRY" = 1 ]; then
  step bench 150 30 bench.log "$PY" benchmarks/kernels.py --dry-run --no-interpreter \
    --families ampere,hopper --devices H100,H200 --json "$OUT_DIR/figures.json" $BENCH
else
  now=$(date +%s)
  B=$((DEADLINE - now - 80 - 45))              # the sanitizers' reserve, the last entry's time
  [ "$B" -gt 130 ] && B=130
  step bench 200 80 bench.log env JAX_PLATFORMS=cuda,cpu "$PY" benchmarks/kernels.py --gpu \
    --no-interpreter --families ampere,hopper --devices H100,H200 \
    --json "$OUT_DIR/figures.json" --budget "$B" $BENCH
fi

# ---- compute-sanitizer over one GEMM, one attention and one grouped GEMM call
CALLS="hopper/gemm-bf16 hopper/attention-bf16 hopper/grouped_gemm-bf16"
if [ "$DRY" = 1 ]; then
  # shellcheck disable=SC2086
  step sanitize-prog 60 0 sanitizer.log "$PY" benchmarks/gpu_proof.py sanitize --dry-run $CALLS
  if command -v compute-sanitizer >/dev/null; then
    step sanitizer-version 20 0 sanitizer.log compute-sanitizer --version
  else
    skip sanitizer sanitizer.log "compute-sanitizer is not on PATH here (the GPU run says so too)"
  fi
elif ! command -v compute-sanitizer >/dev/null; then
  skip memcheck sanitizer.log "compute-sanitizer not found"
  skip racecheck sanitizer.log "compute-sanitizer not found"
else
  export REFUSAL_OK=1
  # shellcheck disable=SC2086
  step memcheck 90 45 sanitizer.log env JAX_PLATFORMS=cuda XLA_PYTHON_CLIENT_ALLOCATOR=platform \
    compute-sanitizer --tool memcheck --error-exitcode 3 "$PY" benchmarks/gpu_proof.py sanitize $CALLS
  # shellcheck disable=SC2086
  step racecheck 90 0 sanitizer.log env JAX_PLATFORMS=cuda XLA_PYTHON_CLIENT_ALLOCATOR=platform \
    compute-sanitizer --tool racecheck --error-exitcode 3 "$PY" benchmarks/gpu_proof.py sanitize $CALLS
  unset REFUSAL_OK
fi

# ---- the GEMM's tile plans (benchmarks/gemm_sweep.py), then ncu: the default plan's
# sections, and the device time of a copy and of one call of each ONCE entry and of each
# of its baselines (apart from the host's dispatch; in the order gpu_proof.py once prints)
ONCE="hopper/rms_norm-f32 hopper/layer_norm-f32 hopper/softmax-f32 hopper/swiglu-f32 \
hopper/attention-bf16 hopper/gemm-bf16 hopper/grouped_gemm-bf16 ampere/rms_norm-f32"
NCU="$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)"
SECTIONS=(--section SpeedOfLight --section ComputeWorkloadAnalysis --section
          MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy
          --section LaunchStats)
if [ "$DRY" = 1 ]; then
  step sweep 120 0 bench.log "$PY" benchmarks/gemm_sweep.py --dry-run --plans default \
    bn256-s4-c2 persistent-bn128-s4 --out f32
  # shellcheck disable=SC2086
  step once 120 0 bench.log "$PY" benchmarks/gpu_proof.py once --dry-run $ONCE
  if [ -n "$NCU" ]; then step ncu-version 20 0 bench.log "$NCU" --version
  else skip ncu bench.log "ncu is not on PATH here (the GPU run says so too)"; fi
else
  step sweep 150 100 bench.log env JAX_PLATFORMS=cuda "$PY" benchmarks/gemm_sweep.py
  if [ -z "$NCU" ]; then
    skip ncu-gemm bench.log "ncu not found"
    skip ncu-time bench.log "ncu not found"
  else
    export REFUSAL_OK=1
    step ncu-gemm 120 60 bench.log "$NCU" --target-processes all -k 'regex:^gemm$' -c 1 \
      "${SECTIONS[@]}" env JAX_PLATFORMS=cuda "$PY" benchmarks/gemm_sweep.py --once default
    # shellcheck disable=SC2086
    step ncu-time 120 0 bench.log "$NCU" --target-processes all --csv --metrics \
      gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
      env JAX_PLATFORMS=cuda "$PY" benchmarks/gpu_proof.py once $ONCE
    unset REFUSAL_OK
  fi
fi

# ---- summary.txt, figures.json's steps, first_failure.log
"$PY" benchmarks/gpu_proof.py finalize "$STEPS" "$OUT_DIR"
rc=$?
# the device machine returns files of at most 16 MiB: a longer log keeps its head and tail
for f in "$OUT_DIR"/*; do
  size=$(stat -c %s "$f")
  if [ "$size" -gt 15000000 ]; then
    { head -c 7000000 "$f"; printf '\n\n[... cut: the file had %s bytes ...]\n\n' "$size"
      tail -c 7000000 "$f"; } > "$WORK/cut" && mv "$WORK/cut" "$f"
  fi
done
echo "gpu_proof: $(( $(date +%s) - START ))s; files in $OUT_DIR: $(ls "$OUT_DIR" | tr '\n' ' ')"
rm -rf "$WORK"
exit $rc
