#!/usr/bin/env bash
# tools/profile_step.sh — where a training step's time goes, by category, at 1 and 2 threads:
# `perf record` (DWARF call graphs) on `qkv bench`'s training steps, each sample charged to the
# first category its call stack passes through (gemm, fused attention, cross-entropy, ...). The
# shares are of the samples inside models::train_step and on the pool's worker threads, so bench's
# own reference timings are left out.
# Usage: bash tools/profile_step.sh [toy|large] [steps]   (needs linux-perf and build/qkv)
set -euo pipefail
cd "$(dirname "$0")/.."
size=${1:-toy}
steps=${2:-40}
qkv=${QKV:-build/qkv}
command -v perf >/dev/null || { echo "profile_step.sh: perf not found (apt-get install linux-perf)" >&2; exit 1; }
data=$(mktemp)
trap 'rm -f "$data" "$data.old"' EXIT
for threads in 1 2; do
  perf record -q --call-graph dwarf,16384 -F 499 -o "$data" "$qkv" bench --size "$size" --steps "$steps" \
    --threads "$threads" 2>/dev/null | awk '$1 == "RESULT" && $2 == "qkv" { printf "%s, %s thread(s): %s ms per step\n", $3, t, $5 }' t="$threads"
  perf script -i "$data" -F comm,tid,ip,sym 2>/dev/null | /usr/bin/python3 -c '
import collections, re, sys
# first matching frame, innermost first, decides; the order puts the specific before the general
categories = [
    ("gemm (OpenBLAS)", ("sgemm_", "dgemm_", "cblas_")),
    ("fused attention", ("cpu::attention_", "forward_typed", "backward_typed")),
    ("cross-entropy and softmax", ("cross_entropy", "softmax")),
    ("layer norm", ("layer_norm",)),
    ("AdamW", ("Adam::step", "adam_")),
    ("gradient clipping", ("clip_grad_norm",)),
    ("reductions (bias grads)", ("reduce_sum", "sum_to", "row_sum")),
    ("elementwise", ("binary_", "unary", "relu", "gelu", "strided_copy", "contiguous")),
    ("thread pool waiting", ("sched_yield", "futex", "for_each_piece", "run_pieces")),
    ("allocation", ("malloc", "free", "BlockCache", "operator new", "operator delete")),
]
counts, total = collections.Counter(), 0
# one sample per run of lines between blank ones: a header, then its frames (indented), innermost first
for sample in re.split(r"\n\s*\n", sys.stdin.read()):
    stack = [(line.split(None, 1) + [""])[1] for line in sample.split("\n") if line.startswith(("\t", " "))]
    # the main thread inside a step, or a pool worker (whose stack has no main); OpenBLAS threads
    # of the raw-sgemm reference runs are left out with the rest of the bench timing
    in_step = any("train_step" in s for s in stack)
    worker = not any(s == "main" or "__libc_start" in s for s in stack) and any("worker_main" in s for s in stack)
    if not (in_step or worker):
        continue
    total += 1
    name = next((name for name, keys in categories if any(any(k in frame for k in keys) for frame in stack[:-1] or stack)),
                "other (graph, shapes, glue)")
    counts[name] += 1
for name, n in counts.most_common():
    print(f"  {name:<30} {100 * n / max(total, 1):5.1f}%")
print(f"  ({total} samples in training steps, all threads)")
'
done
