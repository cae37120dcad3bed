#!/usr/bin/env bash
# tools/bench_vs_pytorch.sh — qkv's training step against PyTorch's on this machine: both sides at 1
# and at 2 threads, in alternating rounds (ROUNDS, default 5) within one run, then the medians, the
# core-for-core ratios (1 thread each), the best-against-best ratios (each side's best thread
# count), each size's FLOPs per step and qkv's fraction of the gemm floor (raw sgemm at the step's
# own shapes, measured by `qkv bench` in the same run). The floor share and "same work" (below) are
# also given round by round, with their median and range: each round's floor, qkv step and PyTorch
# runs are close together in time, so a VM whose speed drifts moves both sides of each ratio. A
# ratio > 1 means qkv is faster. Both sides time the shipped model's positions (rotary; PyTorch's
# cos and sin tables made once, as its users cache them).
# "1 thread" means one core on both sides: PyTorch's OpenBLAS is capped too (tools/bench_pytorch.py
# says why). "torch 1t+blas" is 1 torch thread with OpenBLAS at its default of one thread per core,
# the fastest PyTorch configuration measured here; best against best takes PyTorch's fastest of three.
# qkv skips the last layer's source rows, which reach no logit; "torch 1t skip" runs PyTorch with the
# same skip (tools/bench_pytorch.py --skip-source-rows, checked against the twin's logits first), and
# "same work" is qkv against it, core for core.
# BUSY=1 measures a busy machine instead: a spinning shell loop holds one core (stopped at the end,
# also on Ctrl-C or an error) while both sides run at their default thread counts and at 1 thread.
# Needs python3-torch for /usr/bin/python3 (QKV_WITH_TORCH=1 bash tools/setup.sh) and build/qkv (or QKV=path).
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-5}
steps=${STEPS:-10}
qkv=${QKV:-build/qkv}  # QKV=build/cpu-only/qkv for a CPU-only build
busy=${BUSY:-0}
results=$(mktemp) spinner=""
trap 'rm -f "$results"; [ -n "$spinner" ] && kill "$spinner" 2>/dev/null || true' EXIT
# One row per size for each run; each row ends with its round, for the per-round ratios below.
run_qkv() {  # threads
  "$qkv" bench --steps "$steps" --threads "$1" | awk -v t="$1" -v r="$round" '
    $1 == "RESULT" && $2 == "qkv" && $4 == "cpu" { print "qkv", t, $3, $5, r }
    $1 == "RESULT" && $2 == "floor" { print "floor", t, $3, $4, $5, r }' >>"$results"
}
run_torch() {  # label threads [tools/bench_pytorch.py options]
  local label=$1 threads=$2; shift 2
  /usr/bin/python3 tools/bench_pytorch.py --steps "$steps" --threads "$threads" "$@" | awk -v t="$label" -v r="$round" '
    $1 == "RESULT" { print "torch", t, $3, $5, r }' >>"$results"
}
thread_counts="1 2"
if [ "$busy" = 1 ]; then
  bash -c 'while :; do :; done' &
  spinner=$!
  echo "busy machine: spinner pid $spinner holds one core" >&2
  thread_counts="0 1"  # 0: each side's default (qkv: one thread per core; torch: its defaults)
fi
for round in $(seq "$rounds"); do
  for threads in $thread_counts; do
    if [ $((round % 2)) -eq 1 ]; then run_qkv "$threads"; run_torch "$threads" "$threads"
    else run_torch "$threads" "$threads"; run_qkv "$threads"; fi
  done
  if [ "$busy" != 1 ]; then
    run_torch 1b 1 --blas-default
    run_torch 1s 1 --skip-source-rows --check
  fi
  echo "round $round of $rounds done" >&2
done
/usr/bin/python3 - "$results" "$rounds" "$busy" <<'PY'
import collections, statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
times = collections.defaultdict(list)  # (qkv or torch, threads label, size): ms of each round
for r in rows:
    if r[0] in ("qkv", "torch"):
        times[r[0], r[1], r[2]].append(float(r[3]))
med = {key: statistics.median(v) for key, v in times.items()}
def medians(size, *columns):
    return (med.get((i, t, size), float("nan")) for i, t in columns)
if sys.argv[3] == "1":
    print(f"busy machine (one core held by a spinner): ms per training step, median of {sys.argv[2]} alternating rounds")
    print(f"{'size':<6} {'qkv default':>11} {'qkv 1t':>8} {'default/1t':>10} {'torch default':>13} {'torch 1t':>9}"
          f" {'default/1t':>10} {'qkv vs torch (defaults)':>24}")
    for size in ("toy", "large"):
        q0, q1, t0, t1 = medians(size, ("qkv", "0"), ("qkv", "1"), ("torch", "0"), ("torch", "1"))
        print(f"{size:<6} {q0:11.2f} {q1:8.2f} {q0 / q1:10.2f} {t0:13.2f} {t1:9.2f} {t0 / t1:10.2f} {t0 / q0:23.2f}x")
    print("default/1t above 1 means the default thread count is slower than one thread; the last column above 1 means qkv is faster")
    sys.exit(0)
print(f"ms per training step, median of {sys.argv[2]} alternating rounds (forward, backward, clip, AdamW):")
print(f"{'size':<6} {'qkv 1t':>9} {'torch 1t':>9} {'qkv 2t':>9} {'torch 2t':>9} {'torch 1t+blas':>14} {'torch 1t skip':>14}"
      f"  {'core for core':>13}  {'best vs best':>12}  {'same work':>9}")
for size in ("toy", "large"):
    q1, t1, q2, t2, t1b, t1s = medians(size, ("qkv", "1"), ("torch", "1"), ("qkv", "2"), ("torch", "2"),
                                       ("torch", "1b"), ("torch", "1s"))
    print(f"{size:<6} {q1:9.2f} {t1:9.2f} {q2:9.2f} {t2:9.2f} {t1b:14.2f} {t1s:14.2f}"
          f"  {t1 / q1:12.2f}x  {min(t1, t2, t1b) / min(q1, q2):11.2f}x  {t1s / q1:8.2f}x")
print("torch 1t+blas: 1 torch thread, OpenBLAS at its default thread count (it uses both cores in gemm)")
print("torch 1t skip: 1 thread, the last layer's source rows skipped as qkv does; same work: it against qkv 1t")
for size in ("toy", "large"):
    floor = [r for r in rows if r[0] == "floor" and r[1] == "1" and r[2] == size]
    if floor:
        floor_ms = statistics.median(float(r[4]) for r in floor)
        print(f"{size:<6} {float(floor[0][3]):.2f} GFLOP per step; gemm floor at 1 thread {floor_ms:.2f} ms; "
              f"qkv at 1 thread reaches {100 * floor_ms / med.get(('qkv', '1', size)):.0f}% of it")
# The same two ratios round by round (each round's floor and qkv step come from one `qkv bench`, its
# PyTorch runs follow it): their median and range say how far one run can be trusted.
by_round = {(r[0], r[1], r[2], r[-1]): r for r in rows}  # one row per (kind, threads, size, round)
def per_round(size, num, den):
    return [float(by_round[num[:2] + (size, rnd)][num[2]]) / float(by_round[den[:2] + (size, rnd)][den[2]])
            for rnd in sorted({r[-1] for r in rows})
            if num[:2] + (size, rnd) in by_round and den[:2] + (size, rnd) in by_round]
for size in ("toy", "large"):
    share = per_round(size, ("floor", "1", 4), ("qkv", "1", 3))
    same = per_round(size, ("torch", "1s", 3), ("qkv", "1", 3))
    if share and same:
        print(f"{size:<6} round by round: floor share median {100 * statistics.median(share):.0f}% "
              f"(range {100 * min(share):.0f}-{100 * max(share):.0f}%), same work median {statistics.median(same):.2f}x "
              f"(range {min(same):.2f}-{max(same):.2f}x)")
PY
