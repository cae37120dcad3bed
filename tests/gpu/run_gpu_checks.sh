#!/usr/bin/env bash
# tests/gpu/run_gpu_checks.sh — every check that needs a GPU, in one run of a few minutes:
# build (with nvcc), the CPU tests, the CPU/GPU parity tests, one training epoch on cuda, the
# benchmark, and the parity tests under compute-sanitizer.
# Run from the repository root: bash tests/gpu/run_gpu_checks.sh
# On a machine without qkv's Debian packages (the lent device machine has CUDA but no network),
# first run `bash tools/gpu_deps.sh fetch` on a Debian 12 machine and carry .gpu-debs/ along.
# Logs go to $OUT when it is set.
set -euo pipefail
cd "$(dirname "$0")/../.."
LOG_DIR=${OUT:-/tmp}

echo "== device"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || echo "(nvidia-smi not found)"
NVCC="$(command -v /usr/local/cuda/bin/nvcc || command -v nvcc || true)"
[ -n "$NVCC" ] || { echo "nvcc not found: this build would be CPU-only"; exit 1; }
"$NVCC" --version | tail -1
g++ --version | head -1

if [ "${QKV_USE_DEBS:-0}" = 1 ] || ! pkg-config --exists openblas fmt stb harfbuzz nlohmann_json CLI11 2>/dev/null; then
  echo "== libraries from .gpu-debs/ (this machine lacks qkv's Debian packages)"
  deps_env=$(bash tools/gpu_deps.sh env)
  eval "$deps_env"
fi

echo "== build"
start=$(date +%s)
make -j"$(nproc)" 2>&1 | tee "$LOG_DIR/build.log" | grep -E "error:|warning:" || true
[ -x build/qkv ] && [ -x build/qkv_gpu_tests ] || { echo "build failed; see build.log"; tail -30 "$LOG_DIR/build.log"; exit 1; }
echo "build took $(( $(date +%s) - start ))s"

# Each stage after the build runs even when one before it failed (a lent machine's minutes are
# few: one run should show every problem); the table at the end says which passed, and the exit
# status is non-zero if any failed.
declare -a summary=()
failed=0
stage() {  # stage NAME COMMAND...: runs it, its output also into $LOG_DIR/NAME.log
  local name=$1
  shift
  echo "== $name"
  local begin rc
  begin=$(date +%s)
  set +e
  "$@" 2>&1 | tee "$LOG_DIR/$name.log"
  rc=${PIPESTATUS[0]}
  set -e
  summary+=("$(printf '%-14s %-6s %4ss' "$name" "$([ "$rc" = 0 ] && echo passed || echo "rc=$rc")" $(( $(date +%s) - begin )))")
  [ "$rc" = 0 ] || failed=1
}

cpu_tests() { timeout 300 ./build/qkv_tests 2>&1 | tail -3; }
gpu_tests() { timeout 300 ./build/qkv_gpu_tests; }
cuda_epoch() {
  rm -rf /tmp/qkv_gpu_epoch
  timeout 300 ./build/qkv train --device cuda --epochs 1 --out /tmp/qkv_gpu_epoch && ls /tmp/qkv_gpu_epoch
}
# One data-parallel epoch on cuda through NCCL (as many ranks as GPUs; rank r uses GPU r mod count).
cuda_dp() {
  if ! ./build/qkv --version | grep -q "NCCL on" || ! command -v mpirun >/dev/null; then
    echo "skipped: this build has no NCCL or there is no mpirun"
    return 0
  fi
  local gpus
  gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
  gpus=$((gpus > 0 ? gpus : 1))
  rm -rf /tmp/qkv_gpu_dp
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 300 mpirun -np "$gpus" --oversubscribe \
    ./build/qkv train --device cuda --data-parallel --epochs 1 --out /tmp/qkv_gpu_dp && ls /tmp/qkv_gpu_dp
}
# Training steps on the CPU and on cuda (ms, GFLOP/s of the step's products), the residual +
# LayerNorm fused against add + layer_norm (GB/s), and cuBLAS's sgemm against the card's peak.
bench() { timeout 300 ./build/qkv bench --device cpu --device cuda; }
# Each positions scheme's training step on the GPU beside absolute's (rotary turns q and k in one pass).
positions() { timeout 120 ./build/qkv bench --device cuda --positions rotary absolute+rotary alibi; }
# The fused attention on the GPU, up to the tutorial's T = 100,000 (time and TFLOP/s).
attention() { timeout 240 ./build/qkv bench --device cuda --attention-length 4096 16384 100000; }
# The parity tests again under compute-sanitizer's memory checker (out-of-bounds and misaligned
# accesses in the kernels), where the machine has it; at most two minutes. The errors that the
# tests provoke on purpose through the API (an allocation too large for the card) are not its
# concern: --report-api-errors no. Each kind of error found is listed once, with its count.
sanitizer() {
  local tool rc=0
  tool=$(command -v compute-sanitizer || command -v /usr/local/cuda/bin/compute-sanitizer || true)
  [ -n "$tool" ] || { echo "skipped: no compute-sanitizer"; return 0; }
  timeout 120 "$tool" --tool memcheck --report-api-errors no --error-exitcode 3 ./build/qkv_gpu_tests \
    >/tmp/qkv_sanitizer.log 2>&1 || rc=$?
  grep -E '^========= [A-Z]' /tmp/qkv_sanitizer.log | grep -v 'ERROR SUMMARY' | sort | uniq -c | sort -rn | head -20
  grep -E 'ERROR SUMMARY|passed, [0-9]+ failed' /tmp/qkv_sanitizer.log || tail -5 /tmp/qkv_sanitizer.log
  return "$rc"
}

stage cpu_tests cpu_tests
stage gpu_tests gpu_tests
stage cuda_epoch cuda_epoch
stage cuda_dp cuda_dp
stage bench bench
stage positions positions
stage attention attention
stage sanitizer sanitizer

echo "== summary"
printf '%s\n' "${summary[@]}"
exit "$failed"
