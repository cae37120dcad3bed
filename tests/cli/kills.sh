#!/usr/bin/env bash
# tests/cli/kills.sh — a training run killed (SIGKILL, by strace's fault injection) at each file
# operation it makes in its --out: every openat, write, fsync, rename and unlink there, and the
# first traced call after the last of them. After each kill one command finishes the run, and
# its model.safetensors is byte-identical to an uninterrupted run's:
#   qkv train --resume --out D
# except when the kill came before the run's first save (the state written before any
# training), where --resume says "holds no saved run" and the command that started the run works.
# QKV_KILLS=N tests only every Nth operation (the default, 1, tests all; about 60 of them).
# Prints "skipped: strace not installed" and passes where strace is missing.
set -u
QKV=${QKV:-build/qkv}
QKV=$(realpath "$QKV")
if ! command -v strace >/dev/null; then
  echo "kill test skipped: strace not installed (tools/setup.sh installs it)"
  exit 0
fi
every=${QKV_KILLS:-1}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
passed=0
failed=0
fail() { echo "FAIL: kills: $*"; failed=$((failed + 1)); }

mkdir -p data
printf 'money bank grows\tपैसा बढ़ता है\nriver bank flows\tनदी बहती है\nshe ate a piece of cake\tउसने केक का एक टुकड़ा खाया\nthe exam was a piece of cake\tपरीक्षा बहुत आसान थी\nhe sat on the bank\tवह किनारे पर बैठा\n' >data/train.tsv
printf 'money bank flows\tपैसा बहता है\n' >data/valid.tsv
printf 'river bank grows\tनदी बढ़ती है\n' >data/test.tsv
run=(train --batch 2 --layers 2 --d-model 8 --d-k 4 --d-ff 16 --epochs 2 --data data)  # 3 steps per epoch

"$QKV" "${run[@]}" --out whole >log 2>&1 || { cat log; echo "FAIL: kills: the uninterrupted run"; exit 1; }
calls=(openat write fsync rename unlink)
trace=$(IFS=,; echo "${calls[*]}")
strace -f -qq -y -e trace="$trace" -o trace.log "$QKV" "${run[@]}" --out traced >/dev/null 2>&1 ||
  { echo "FAIL: kills: the traced run"; exit 1; }

# The operations to kill at: "call N what" for each call in the main thread that touches traced/
# (N counts that call from the program's start, as strace's when=N does), then the first call after.
python3 - trace.log >ops.txt <<'PY'
import re, sys
main, counts, ops, after = None, {}, [], None
for line in open(sys.argv[1]):
    m = re.match(r'(\d+) +(\w+)\((.*)', line)
    if not m:
        continue
    pid, call, rest = m.groups()
    main = main or pid
    if pid != main:
        continue
    counts[call] = counts.get(call, 0) + 1
    if '/traced' in rest or '"traced' in rest:
        what = re.sub(r'[^A-Za-z0-9_.]+', ' ', rest.split(')', 1)[0]).replace('traced', 'D').strip()[:60]
        ops.append(f"{call} {counts[call]} {what}")
        after = None
    elif ops and after is None:
        after = f"{call} {counts[call]} (the first call after the last file operation)"
for op in ops + ([after] if after else []):
    print(op)
PY
total=$(wc -l <ops.txt)
[ "$total" -ge 40 ] || { cat trace.log; echo "FAIL: kills: only $total file operations traced"; exit 1; }
first_state=$(grep -n '^rename .*train_state' ops.txt | head -1 | cut -d: -f1)

index=0
reruns=0
while read -r call n what; do
  index=$((index + 1))
  [ $(((index - 1) % every)) -eq 0 ] || continue
  rm -rf D
  # (in a subshell, so that bash does not report each kill)
  (strace -f -qq -e trace="$call" -e inject="$call":signal=SIGKILL:when="$n" -o inject.log \
    "$QKV" "${run[@]}" --out D >out 2>&1; exit $?) 2>/dev/null
  rc=$?
  if [ "$rc" -ne 137 ] || ! grep -q "killed by SIGKILL" inject.log; then
    fail "kill $index ($call #$n: $what): not killed (rc $rc): $(tail -2 inject.log)"
    continue
  fi
  "$QKV" train --resume --out D >out 2>&1
  rc=$?
  if [ "$rc" -ne 0 ] && grep -q "holds no saved run to resume" out; then
    if [ "$index" -gt "$first_state" ]; then
      fail "kill $index ($call #$n: $what), after the first state's rename (operation $first_state): $(cat out)"
      continue
    fi
    reruns=$((reruns + 1))
    "$QKV" "${run[@]}" --out D >out 2>&1
    rc=$?
  fi
  if [ "$rc" -eq 0 ] && cmp -s whole/model.safetensors D/model.safetensors && [ -f D/loss.png ] &&
     [ ! -e D/train_state.safetensors ] && [ "$(wc -l <D/metrics.csv)" -eq 3 ] && [ -z "$(ls D | grep tmp)" ]; then
    passed=$((passed + 1))
  else
    fail "kill $index ($call #$n: $what), then --resume: rc $rc, $(tr '\n' ' ' <out) [$(ls D 2>&1 | tr '\n' ' ')]"
  fi
done <ops.txt

# A full disk (ENOSPC injected at a write of the state): before the run's first save nothing is
# kept and the error says so; later, the error names the step the run is saved at, and --resume
# finishes it byte-identical.
state_writes=($(awk '$1 == "write" && / train_state/ {print $2}' ops.txt))
enospc() {  # enospc N: ENOSPC at the Nth write
  rm -rf D
  strace -f -qq -e trace=write -e inject=write:error=ENOSPC:when="$1" -o inject.log "$QKV" "${run[@]}" --out D >out 2>err
}
enospc "${state_writes[0]}"
rc=$?
if [ "$rc" -eq 1 ] && [ "$(wc -l <err)" -eq 1 ] && grep -q "No space left on device (the disk is full before the run's first save" err &&
   [ ! -e D ]; then
  passed=$((passed + 1))
else
  fail "ENOSPC at the first state's write: rc $rc, $(cat err) [$(ls D 2>&1 | tr '\n' ' ')]"
fi
enospc "${state_writes[4]}"  # the state at the end of epoch 2 (after the first save's and epoch 1's)
rc=$?
if [ "$rc" -eq 1 ] && grep -q "(the disk is full; the run is saved at step 3: free space and continue it with qkv train --resume --out D)" err &&
   "$QKV" train --resume --out D >out 2>&1 && cmp -s whole/model.safetensors D/model.safetensors; then
  passed=$((passed + 1))
else
  fail "ENOSPC at the state at the end of epoch 2, then --resume: rc $rc, $(cat err out)"
fi
echo "kills: $passed passed, $failed failed, of $total file operations (every $every; $reruns before the first save needed the starting command) and 2 full disks"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
