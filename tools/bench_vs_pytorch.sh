#!/usr/bin/env bash
# tools/bench_vs_pytorch.sh — trains the shipped model's step in qkv and in PyTorch, one after the
# other on this machine, and prints qkv's speed as a ratio to PyTorch's (> 1 means qkv is faster).
# Needs python3-torch for /usr/bin/python3 (QKV_WITH_TORCH=1 bash tools/setup.sh) and build/qkv.
set -euo pipefail
cd "$(dirname "$0")/.."
steps=${STEPS:-20}
qkv_out=$(build/qkv bench --steps "$steps")
torch_out=$(/usr/bin/python3 tools/bench_pytorch.py --steps "$steps")
echo "$qkv_out" | grep -v '^RESULT'
echo "$torch_out" | grep -v '^RESULT'
for size in toy large; do
  q=$(echo "$qkv_out" | awk -v s="$size" '$1 == "RESULT" && $3 == s && $4 == "cpu" {print $5}')
  t=$(echo "$torch_out" | awk -v s="$size" '$1 == "RESULT" && $3 == s {print $5}')
  awk -v s="$size" -v q="$q" -v t="$t" 'BEGIN { printf "%-6s qkv %.2f ms/step, PyTorch %.2f ms/step: qkv is %.2fx PyTorch'"'"'s speed\n", s, q, t, t / q }'
done
