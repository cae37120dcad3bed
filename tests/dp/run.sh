#!/usr/bin/env bash
# tests/dp/run.sh — data-parallel training under mpirun, 2 ranks on this machine: a 2-rank run
# matches a 1-process run with the same global batch (float64 checkpoints to 1e-10 relative,
# float32 losses to 1e-5 of each loss over 50 steps), reruns are byte-identical, resume works with the same
# number of ranks, and a dead rank, different flags or a different dataset stop every rank with
# a clear line. Skipped (and passing) where qkv was built without MPI.
set -u
QKV=${QKV:-build/qkv}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0
failed=0
pass() { passed=$((passed + 1)); }
fail() { echo "FAIL: data-parallel: $*"; failed=$((failed + 1)); }

if ! "$QKV" --version | grep -q "MPI on"; then
  "$QKV" train --data-parallel --epochs 1 --out "$work/o" >/dev/null 2>"$work/err"
  if [ $? -ne 0 ] && [ "$(wc -l <"$work/err")" -eq 1 ] && grep -q "needs MPI" "$work/err" && [ ! -e "$work/o" ]; then
    echo "data-parallel tests skipped: qkv was built without MPI (--data-parallel fails with one line, checked)"
    exit 0
  fi
  echo "FAIL: data-parallel without MPI: $(cat "$work/err")"
  exit 1
fi
command -v mpirun >/dev/null || { echo "FAIL: qkv has MPI but mpirun is missing (bash tools/setup.sh installs openmpi-bin)"; exit 1; }
# root needs OpenMPI's consent; no network: shared memory and loopback only; 2 ranks on 2 cores
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self,vader OMPI_MCA_rmaps_base_oversubscribe=1
mpi() { timeout 300 mpirun -np "$@"; }

# 3200 sentences, batch 64: 50 steps an epoch
mkdir -p "$work/data"
head -n 3200 data/idioms/train.tsv >"$work/data/train.tsv"
head -n 200 data/idioms/valid.tsv >"$work/data/valid.tsv"
head -n 100 data/idioms/test.tsv >"$work/data/test.tsv"
model=(--layers 2 --d-model 32 --d-k 16 --d-ff 64 --threads 1 --batch 64)
# without dropout, 2 ranks must match 1 process; with it (the default), each rank draws its own masks,
# keyed by the step and the rank, as in PyTorch's DDP (the resume test below runs with it)
small=(--data "$work/data" --layers 2 --d-model 32 --d-k 16 --d-ff 64 --threads 1 --batch 64 --dropout 0)
dropped=(--data "$work/data" --layers 2 --d-model 32 --d-k 16 --d-ff 64 --threads 1 --batch 64)

# ---- launch mistakes: mpirun without --data-parallel is refused; --data-parallel alone says it has 1 rank ----
mpi 2 "$QKV" train "${small[@]}" --epochs 1 --out "$work/dup" >"$work/out" 2>&1
[ $? -ne 0 ] && grep -q "mpirun started 2 copies of qkv train without --data-parallel.*mpirun -np 2 qkv train --data-parallel" "$work/out" &&
  [ ! -e "$work/dup" ] && pass || fail "mpirun -np 2 without --data-parallel is refused, naming the fix: $(cat "$work/out")"
"$QKV" train "${small[@]}" --epochs 1 --data-parallel --out "$work/alone" >/dev/null 2>"$work/err" &&
  grep -q "1 rank (not launched by mpirun" "$work/err" && pass || fail "--data-parallel without mpirun names its 1 rank: $(cat "$work/err")"

# ---- exactness: float64 checkpoints, float32 losses ----
"$QKV" train "${small[@]}" --epochs 2 --dtype float64 --out "$work/one64" >/dev/null 2>&1 || fail "1-process float64 run"
mpi 2 "$QKV" train "${small[@]}" --epochs 2 --dtype float64 --data-parallel --out "$work/two64" >"$work/out" 2>&1 ||
  fail "2-rank float64 run: $(tail -n 5 "$work/out")"
python3 tests/dp/compare.py checkpoints "$work/one64/model.safetensors" "$work/two64/model.safetensors" 1e-10 && pass ||
  fail "2 ranks vs 1 process, float64 checkpoints (above)"
# --target-noise hides Hindi inputs by each pair's key: 2 ranks hide what 1 process hides
"$QKV" train "${small[@]}" --epochs 1 --dtype float64 --target-noise 0.3 --out "$work/noise1" >/dev/null 2>&1 ||
  fail "1-process --target-noise run"
mpi 2 "$QKV" train "${small[@]}" --epochs 1 --dtype float64 --target-noise 0.3 --data-parallel --out "$work/noise2" \
  >"$work/out" 2>&1 || fail "2-rank --target-noise run: $(tail -n 5 "$work/out")"
python3 tests/dp/compare.py checkpoints "$work/noise1/model.safetensors" "$work/noise2/model.safetensors" 1e-10 &&
  pass || fail "2 ranks with --target-noise 0.3 differ from 1 process"
"$QKV" train "${small[@]}" --epochs 1 --out "$work/one32" --step-losses "$work/one32.losses" >/dev/null 2>&1 ||
  fail "1-process float32 run"
mpi 2 "$QKV" train "${small[@]}" --epochs 1 --data-parallel --out "$work/two32" --step-losses "$work/two32.losses" \
  >"$work/out" 2>&1 || fail "2-rank float32 run: $(tail -n 5 "$work/out")"
[ "$(wc -l <"$work/two32.losses")" -eq 50 ] && python3 tests/dp/compare.py losses "$work/one32.losses" "$work/two32.losses" 1e-5 &&
  pass || fail "2 ranks vs 1 process, float32 losses over 50 steps (above)"
# rank 0 alone wrote the files, and only once
grep -q "^training learned attention, 2 layers, rotary positions (half sampled from [0-9]*) on 2 data-parallel ranks:" "$work/out" && pass ||
  fail "the start line names the rank count: $(head -n 2 "$work/out")"
[ -f "$work/two32/model.safetensors" ] && [ -f "$work/two32/loss.png" ] && [ "$(wc -l <"$work/two32/metrics.csv")" -eq 2 ] &&
  [ "$(grep -o 'train loss' "$work/out" | wc -l)" -eq 1 ] && pass || fail "rank 0 writes the files and the progress once: $(cat "$work/out")"

# ---- reruns are byte-identical (the all-reduce order is fixed) ----
mpi 2 "$QKV" train "${small[@]}" --epochs 1 --data-parallel --out "$work/again32" >/dev/null 2>&1
cmp -s "$work/two32/model.safetensors" "$work/again32/model.safetensors" && pass || fail "two 2-rank runs differ"

# ---- resume with the same number of ranks, with the default dropout: byte-identical to the uninterrupted run ----
mpi 2 "$QKV" train "${dropped[@]}" --epochs 1 --data-parallel --out "$work/drop32" >/dev/null 2>&1
mpi 2 "$QKV" train "${dropped[@]}" --epochs 1 --data-parallel --out "$work/res" --stop-after-steps 20 >/dev/null 2>&1
rc=$?
[ "$rc" -eq 130 ] && [ -f "$work/res/train_state.safetensors" ] && pass || fail "interrupted 2-rank run: rc $rc, state saved"
mpi 1 "$QKV" train --resume --out "$work/res" >"$work/out" 2>&1
grep -q "saved by 2 ranks" "$work/out" && pass || fail "resume with 1 process names the 2 ranks: $(tail -n 3 "$work/out")"
mpi 2 "$QKV" train --resume --data-parallel --out "$work/res" >"$work/out" 2>&1 &&
  cmp -s "$work/drop32/model.safetensors" "$work/res/model.safetensors" && pass ||
  fail "2-rank resume equals the uninterrupted run: $(tail -n 3 "$work/out")"

# ---- failures: different flags, different data, a dead rank ----
mpi 1 "$QKV" train "${small[@]}" --epochs 1 --data-parallel --out "$work/f1" --lr 1e-3 : \
  -np 1 "$QKV" train "${small[@]}" --epochs 1 --data-parallel --out "$work/f1" --lr 2e-3 >"$work/out" 2>&1
rc=$?
[ "$rc" -ne 0 ] && grep -q "rank 1 was started with --lr 0.002, rank 0 with --lr 0.001" "$work/out" && [ ! -e "$work/f1" ] && pass ||
  fail "different --lr on rank 1: rc $rc: $(grep -m2 error "$work/out")"
mkdir -p "$work/data2" && cp "$work/data/"*.tsv "$work/data2/" && sed -i '1d' "$work/data2/train.tsv"
mpi 1 "$QKV" train "${small[@]}" --epochs 1 --data-parallel --out "$work/f2" : \
  -np 1 "$QKV" train "${model[@]}" --data "$work/data2" --epochs 1 --data-parallel --out "$work/f2" >"$work/out" 2>&1
rc=$?
[ "$rc" -ne 0 ] && grep -q "rank 1 was started with --data\|rank 1's dataset" "$work/out" && [ ! -e "$work/f2" ] && pass ||
  fail "different dataset on rank 1: rc $rc: $(grep -m2 error "$work/out")"
cp "$work/data/train.tsv" "$work/data2/train.tsv" && sed -i '1s/.*/zzz\tzzz/' "$work/data2/train.tsv"
mpi 1 "$QKV" train "${small[@]}" --epochs 1 --data-parallel --out "$work/f3" : \
  -np 1 "$QKV" train "${model[@]}" --data "$work/data2" --epochs 1 --data-parallel --out "$work/f3" >"$work/out" 2>&1
rc=$?
[ "$rc" -ne 0 ] && grep -q "rank 1" "$work/out" && pass || fail "a different vocabulary on rank 1: rc $rc: $(grep -m2 error "$work/out")"
# a rank killed mid-run: the other stops (mpirun ends the job) well within the timeout
start=$(date +%s)
mpi 2 "$QKV" train "${small[@]}" --epochs 1000 --data-parallel --out "$work/dead" >"$work/out" 2>&1 &
job=$!
for _ in $(seq 1 100); do
  [ -f "$work/dead/train_state.safetensors" ] || [ "$(pgrep -f "out $work/dead" | wc -l)" -ge 3 ] && break
  sleep 0.2
done
sleep 2
victim=$(pgrep -f "^$QKV train .*--out $work/dead" | tail -n 1)
[ -n "$victim" ] && kill -KILL "$victim"
wait "$job"
rc=$?
elapsed=$(( $(date +%s) - start ))
[ -n "$victim" ] && [ "$rc" -ne 0 ] && [ "$elapsed" -lt 60 ] && [ -z "$(pgrep -f "out $work/dead")" ] && pass ||
  fail "a killed rank stops the job: rc $rc after ${elapsed}s (victim '$victim')"

echo "data-parallel: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
