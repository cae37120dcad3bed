#!/usr/bin/env bash
# tests/gpu/run_gpu_checks.sh — every check that needs a GPU, in one run of a few minutes:
# build (with nvcc), the CPU tests, the CPU/GPU parity tests, one training epoch on cuda, and
# the benchmark. Run from the repository root: bash tests/gpu/run_gpu_checks.sh
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

echo "== CPU tests"
timeout 300 ./build/qkv_tests | tail -3

echo "== GPU parity tests"
timeout 300 ./build/qkv_gpu_tests | tee "$LOG_DIR/gpu_tests.log"

echo "== one training epoch on cuda"
rm -rf /tmp/qkv_gpu_epoch
timeout 300 ./build/qkv train --device cuda --epochs 1 --out /tmp/qkv_gpu_epoch
ls /tmp/qkv_gpu_epoch

echo "== one data-parallel epoch on cuda through NCCL (as many ranks as GPUs; rank r uses GPU r mod count)"
if ./build/qkv --version | grep -q "NCCL on" && command -v mpirun >/dev/null; then
  gpus=$(nvidia-smi -L 2>/dev/null | wc -l); gpus=$((gpus > 0 ? gpus : 1))
  rm -rf /tmp/qkv_gpu_dp
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 300 mpirun -np "$gpus" --oversubscribe \
    ./build/qkv train --device cuda --data-parallel --epochs 1 --out /tmp/qkv_gpu_dp | tee "$LOG_DIR/dp.log"
  ls /tmp/qkv_gpu_dp
else
  echo "skipped: this build has no NCCL or there is no mpirun"
fi

echo "== bench"
timeout 300 ./build/qkv bench --device cpu --device cuda | tee "$LOG_DIR/bench.log"

echo "== fused attention on the GPU, up to the tutorial's T = 100,000 (time and TFLOP/s)"
timeout 240 ./build/qkv bench --device cuda --attention-length 4096 16384 100000 | tee "$LOG_DIR/attention.log"
