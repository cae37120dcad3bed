#!/usr/bin/env bash
# tests/gpu/run_gpu_checks.sh — every check that needs a GPU, in one run of a few minutes:
# build (with nvcc), the CPU tests, the CPU/GPU parity tests, one training epoch on cuda, and
# the benchmark. Run from the repository root: bash tests/gpu/run_gpu_checks.sh
set -euo pipefail
cd "$(dirname "$0")/../.."

echo "== device"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader || echo "(nvidia-smi not found)"
NVCC="$(command -v /usr/local/cuda/bin/nvcc || command -v nvcc || true)"
[ -n "$NVCC" ] || { echo "nvcc not found: this build would be CPU-only"; exit 1; }
"$NVCC" --version | tail -1

echo "== build"
start=$(date +%s)
make -j"$(nproc)"
echo "build took $(( $(date +%s) - start ))s"

echo "== CPU tests"
timeout 300 ./build/qkv_tests | tail -3

echo "== GPU parity tests"
timeout 300 ./build/qkv_gpu_tests

echo "== one training epoch on cuda"
rm -rf /tmp/qkv_gpu_epoch
timeout 300 ./build/qkv train --device cuda --epochs 1 --out /tmp/qkv_gpu_epoch
ls /tmp/qkv_gpu_epoch

echo "== bench"
timeout 300 ./build/qkv bench --device cpu --device cuda
