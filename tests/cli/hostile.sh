#!/usr/bin/env bash
# tests/cli/hostile.sh — crafted inputs (issues 26 and 28): training states whose fields are out
# of type, range or agreement (each refused with one line, before anything is sized from them),
# hostile headers and configs, outputs that are devices, pipes or folders, unbounded lines and
# an explorer page fed markup. The states are crafted with their checksum right
# (tests/cli/safetensors_edit.py), so that each check, not the checksum, refuses them; and random
# bit flips of a state (QKV_FLIPS, 40 by default). Run by `make test`.
set -u
QKV=${QKV:-build/qkv}
source "$(dirname "$0")/lib.sh"
edit() { python3 "$(dirname "$0")/safetensors_edit.py" "$@"; }

gen="$work/gen"
mkdir -p "$gen"
printf 'money bank grows\tपैसा बढ़ता है\nriver bank flows\tनदी बहती है\nshe ate a piece of cake\tउसने केक का एक टुकड़ा खाया\nthe exam was a piece of cake\tपरीक्षा बहुत आसान थी\nhe sat on the bank\tवह किनारे पर बैठा\n' >"$gen/train.tsv"
printf 'money bank flows\tपैसा बहता है\n' >"$gen/valid.tsv"
printf 'river bank grows\tनदी बढ़ती है\n' >"$gen/test.tsv"
run=(--batch 2 --layers 2 --d-model 8 --d-k 4 --d-ff 16 --data "$gen" --epochs 3)  # 3 steps per epoch
"$QKV" train "${run[@]}" --out "$work/whole" >/dev/null 2>&1 || fail "the uninterrupted run"
# epoch 2, position 2, step 4: one finished epoch, AdamW moments, a loss sum; and epoch 1, step 2
"$QKV" train "${run[@]}" --stop-after-steps 4 --out "$work/saved" >/dev/null 2>&1
"$QKV" train "${run[@]}" --stop-after-steps 2 --out "$work/saved1" >/dev/null 2>&1
[ -f "$work/saved/train_state.safetensors" ] && [ -f "$work/saved1/train_state.safetensors" ] || fail "no state saved"
base="$work/saved"
ckpt="$work/whole/model.safetensors"  # the default's positions: rotary, randomized
"$QKV" train "${run[@]}" --positions absolute --out "$work/absolute" >/dev/null 2>&1 || fail "the absolute run"
absolute_ckpt="$work/absolute/model.safetensors"  # one with a position table

# ---- issue 26 finding 2, issue 28 findings 3 and 4: every crafted field is refused ----
# crafted NAME PATTERN EDIT...: a copy of the saved run whose state has EDIT applied; --resume
# must fail with one line matching PATTERN, and leave the state there.
crafted() {
  local name=$1 pattern=$2
  shift 2
  rm -rf "$work/c" && cp -r "$base" "$work/c"
  edit "$work/c/train_state.safetensors" "$@"
  expect_error "state with $name" "$pattern" "$QKV" train --resume --out "$work/c"
  [ -f "$work/c/train_state.safetensors" ] && pass || fail "state with $name: the state was removed"
}
crafted "best_loss inf" "'best_loss' is inf, outside" meta best_loss inf
crafted "steps_csv past the state's step" "'steps_csv' line 2 logs step 99999" \
  meta steps_csv $'step,epoch,train_loss,learning_rate\n99999,1,1.0,0.001\n'
crafted "steps_csv not numbers" "'steps_csv' line 2 is not step,epoch,loss,learning_rate" \
  meta steps_csv $'step,epoch,train_loss,learning_rate\n1,1,nan,x\n'
crafted "best_exact nan" "'best_exact' is nan, outside" meta best_exact nan
crafted "best_exact 0x1p+0 (epoch 2)" "best_exact 1 is not the valid exact match of its best epoch 1 in metrics_csv \('0.000000'\)" \
  meta best_exact 0x1p+0
crafted "best_exact 1.5" "'best_exact' is 1.5, outside \[0, 1\]" meta best_exact 0x1.8p+0
crafted "best_epoch 0 after an epoch" "'best_epoch' is 0, outside \[1, 1\]" meta best_epoch 0
base="$work/saved1"  # within epoch 1: no best epoch yet
crafted "best_exact 0x1p+0 (epoch 1)" "'best_exact' is 1, outside \[-1, -1\]" meta best_exact 0x1p+0
crafted "best_exact nan (epoch 1)" "'best_exact' is nan, outside" meta best_exact nan
crafted "best_epoch 1 in epoch 1" "'best_epoch' is 1, outside \[0, 0\]" meta best_epoch 1
base="$work/saved"
crafted "best_exact 1.5 in decimal" "'best_exact' is '1.5', not a number as qkv writes it" meta best_exact 1.5
crafted "tokens_seen -1" "'tokens_seen' is -1, outside \[4, " meta tokens_seen -1
crafted "tokens_seen 2^63-1" "'tokens_seen' is 9223372036854775807, outside \[4, " meta tokens_seen 9223372036854775807
crafted "epoch -1" "'epoch' is -1, outside \[1, 4\]" meta epoch -1
crafted "position past the train split" "'position' is 99999999, outside \[0, [0-9]+\]" meta position 99999999
printf 'epoch\n%.0s' $(seq 100000) >"$work/lines.csv"
crafted "metrics_csv of 100,000 lines" "'metrics_csv' is not the header and one line for each of the 1 finished epoch" \
  meta metrics_csv "@$work/lines.csv"
crafted "best_epoch -7" "'best_epoch' is -7, outside \[1, 1\]" meta best_epoch -7
crafted "train_seconds nan" "'train_seconds' is nan, outside" meta train_seconds nan
crafted "train_seconds -1e308" "'train_seconds' is -1e\+308, outside" meta train_seconds "$(python3 -c 'print("-0x1.1ccf385ebc8ap+1023")')"
crafted "loss_count -1" "'loss_count' is -1, outside \[1, 1\]" meta loss_count -1
crafted "loss_count 2^63-1" "'loss_count' is 9223372036854775807, outside \[1, 1\]" meta loss_count 9223372036854775807
crafted "adam_step 2^63-1" "'adam_step' is 9223372036854775807, outside \[4, 4\]" meta adam_step 9223372036854775807
crafted "step +4" "'step' is '\+4', not an integer" meta step +4
crafted "history numbers in decimal" "'history\[1\] train loss' is '3.5', not a number as qkv writes it" \
  meta history '[[1,"3.5","0x1p+0","0x1p+0"]]'
crafted "history epochs as hex strings" "'history' entry 1 is not \[1, train loss" \
  meta history '[["0x1","0x1p+0","0x1p+0","0x1p+0"]]'
echo "[$(printf '{},%.0s' $(seq 50000)){}]" >"$work/braces.json"
crafted "history of 50,000 {}" "'history' holds more than 16 values|nests deeper" meta history "@$work/braces.json"
crafted "clip 0" "its clip is 0; it must be positive" option clip '"0x0p+0"'
crafted "clip -1" "'clip' is -1, outside" option clip '"-0x1p+0"'
crafted "seed -1" "its seed '-1' is not an integer in \[0, 2\^64\)" option seed '"-1"'
crafted "options of 50,000 {}" "its options are unreadable: (nests deeper than 1 level|holds more than 64 values)" option extra "@$work/braces.json"
crafted "an unknown field" "unknown field 'surprise'" meta surprise 1
crafted "a missing field" "training state has no 'tokens_seen'" drop-meta tokens_seen
crafted "an unknown extra tensor" "has a tensor that no run at step 4 saves: 'param.extra'" \
  copy-tensor param.head.weight param.extra
crafted "a missing AdamW moment" "lacks tensor 'exp_avg_sq.head.weight'" drop-tensor exp_avg_sq.head.weight
crafted "a missing loss sum" "lacks tensor 'loss_sum'" drop-tensor loss_sum
rng=$(python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import safetensors_edit as e
print(e.read(sys.argv[2])[0]["epoch_rng"])' "$(dirname "$0")" "$work/saved/train_state.safetensors")
crafted "a generator state with junk after it" "'epoch_rng' is not a random generator's state as qkv writes it" \
  meta epoch_rng "$rng 7"
# a bit flipped in the state's tensor data: the checksum names it
rm -rf "$work/c" && cp -r "$work/saved" "$work/c"
size=$(stat -c %s "$work/c/train_state.safetensors")
printf '\x01' | dd of="$work/c/train_state.safetensors" bs=1 seek=$((size - 3)) count=1 conv=notrunc 2>/dev/null
expect_error "a state with a changed byte" "train_state.safetensors: corrupted: its content checksum \(CRC32C\)" \
  "$QKV" train --resume --out "$work/c"
# random single-bit flips of the state (QKV_FLIPS of them, 40 by default): each is refused
flips=${QKV_FLIPS:-40}
python3 - "$work/saved/train_state.safetensors" "$work/flips" "$flips" <<'PY'
import os, random, sys
data = open(sys.argv[1], "rb").read()
os.makedirs(sys.argv[2])
rng = random.Random(2026)
for i in range(int(sys.argv[3])):
    bit = rng.randrange(len(data) * 8)
    flipped = bytearray(data); flipped[bit // 8] ^= 1 << (bit % 8)
    open(os.path.join(sys.argv[2], "%04d-bit%d" % (i, bit)), "wb").write(flipped)
PY
refused=0
checksum=0
for f in "$work"/flips/*; do
  rm -rf "$work/c" && cp -r "$work/saved" "$work/c" && cp "$f" "$work/c/train_state.safetensors"
  if "$QKV" train --resume --out "$work/c" >/dev/null 2>"$work/err"; then
    fail "a state with ${f##*-} flipped was resumed"
  elif [ "$(wc -l <"$work/err")" -eq 1 ]; then
    refused=$((refused + 1))
    grep -q "corrupted" "$work/err" && checksum=$((checksum + 1))
  else
    fail "a state with ${f##*-} flipped: $(cat "$work/err")"
  fi
done
[ "$refused" -eq "$flips" ] && pass
echo "state bit flips: $refused of $flips refused ($checksum by the checksum)"
# a state without a checksum (an older qkv's): resumed exactly, with a note
rm -rf "$work/c" && cp -r "$work/saved" "$work/c"
python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import safetensors_edit as e
m, t = e.read(sys.argv[2]); e.write(sys.argv[2], m, t, checksum=False)' "$(dirname "$0")" "$work/c/train_state.safetensors"
if "$QKV" train --resume --out "$work/c" >"$work/out" 2>"$work/err" && grep -q "note: .*no checksum" "$work/err" &&
   cmp -s "$work/c/model.safetensors" "$ckpt"; then
  pass
else
  fail "a state without a checksum: resumed with a note: $(cat "$work/err")"
fi
# the model of the best epoch must be there (issue 28 finding 4: a run that ended without one)
rm -rf "$work/c" && cp -r "$work/saved" "$work/c" && rm "$work/c/model.safetensors"
expect_error "a state whose best model is missing" "best model \(epoch 1\) should be in .*model.safetensors, which is missing" \
  "$QKV" train --resume --out "$work/c"

# ---- sizes from a file are checked against the memory before anything is allocated (issue 26.3) ----
crafted "options of the largest model the command line allows" "the saved run's model does not match" \
  option layers 16
rm -rf "$work/c" && cp -r "$work/saved" "$work/c"
python3 - "$work/c/train_state.safetensors" "$(dirname "$0")" <<'PY'
import json, sys; sys.path.insert(0, sys.argv[2]); import safetensors_edit as e
m, t = e.read(sys.argv[1])
o = json.loads(m["options"]); c = json.loads(m["config"])
o.update(layers=16, d_model=4096, d_k=4096, d_ff=16384, dtype="float64")
c = {k: ({"layers": 16, "d_model": 4096, "d_k": 4096, "d_ff": 16384}.get(k, v)) for k, v in c.items()}
m["options"] = json.dumps(o, separators=(",", ":")); m["config"] = json.dumps(c, separators=(",", ":"), ensure_ascii=False)
e.write(sys.argv[1], m, t)
PY
memory_gb=$(awk '/MemTotal/ {print int($2 / 1e6)}' /proc/meminfo)
if [ "$memory_gb" -lt 200 ]; then
  expect_error "a state of a 3.2-billion-parameter model" "needs [0-9.]+ GB to train \(weights, gradients and two AdamW moments\), more than this machine's" \
    "$QKV" train --resume --out "$work/c"
fi
python3 - "$absolute_ckpt" "$work/wide.safetensors" "$(dirname "$0")" <<'PY'
import json, struct, sys; sys.path.insert(0, sys.argv[3]); import safetensors_edit as e
m, t = e.read(sys.argv[1])
c = json.loads(m["config"]); positions = 100000 + c["max_target"]
c["max_source"] = 100000
dtype, shape, data = t["pos_embed.weight"]
t["pos_embed.weight"] = (dtype, [positions, shape[1]], b"\0" * (4 * positions * shape[1]))
m["config"] = json.dumps(c, separators=(",", ":"))
e.write(sys.argv[2], m, t)
PY
expect_error "attend with a max_source of 100,000" "model config: max_source must be in \[1, 256\], got 100000" \
  "$QKV" attend --checkpoint "$work/wide.safetensors" --format json "river bank"

# A vocabulary word no line of text could give (it holds a space): refused in one line naming the entry.
python3 - "$ckpt" "$work/spaced_vocab.safetensors" "$(dirname "$0")" <<'PY'
import json, sys; sys.path.insert(0, sys.argv[3]); import safetensors_edit as e
m, t = e.read(sys.argv[1])
v = json.loads(m["english_vocab"]); v[5] = "river bank"
m["english_vocab"] = json.dumps(v, separators=(",", ":"), ensure_ascii=False)
e.write(sys.argv[2], m, t)
PY
expect_error "a vocabulary word with a space" "english_vocab: vocabulary entry 5 \(10 bytes\) is not a word" \
  "$QKV" translate --checkpoint "$work/spaced_vocab.safetensors" "river bank"

# A rotary checkpoint whose config asks for the loader's old bound (max_source 1,048,576; no position
# table, so the file stays small): refused in one line by the config's bound, in under a second and
# 100 MB over what the program takes to refuse a missing file (issue 56), before any model or layout
# is sized from it.
python3 - "$ckpt" "$work/rotary_wide.safetensors" "$(dirname "$0")" <<'PY'
import json, sys; sys.path.insert(0, sys.argv[3]); import safetensors_edit as e
m, t = e.read(sys.argv[1])
c = json.loads(m["config"]); c["max_source"] = 1048576
m["config"] = json.dumps(c, separators=(",", ":"))
e.write(sys.argv[2], m, t)
PY
expect_error "translate with a rotary max_source of 1,048,576" "model config: max_source must be in \[1, 256\], got 1048576" \
  "$QKV" translate --checkpoint "$work/rotary_wide.safetensors" "river bank"
python3 - "$QKV" "$work/rotary_wide.safetensors" <<'PY' && pass || fail "a crafted wide layout is refused in under a second and 100 MB"
import os, subprocess, sys, time
def run(path):  # seconds and peak resident MB of one `qkv translate`
    start = time.time()
    child = subprocess.Popen([sys.argv[1], "translate", "--checkpoint", path, "river bank"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    usage = os.wait4(child.pid, 0)[2]
    return time.time() - start, usage.ru_maxrss / 1024
_, floor = run("/nonexistent.safetensors")  # the program and its libraries alone
seconds, megabytes = run(sys.argv[2])
sys.exit(0 if seconds < 1 and megabytes - floor < 100 else f"{seconds:.2f} s, {megabytes - floor:.0f} MB over {floor:.0f}")
PY

# ---- checkpoints: configs and vocabularies of 50,000 {} (issue 28 finding 2), a bad activation ----
for field in config english_vocab; do
  cp "$ckpt" "$work/hostile.safetensors"
  if [ "$field" = config ]; then echo "{$(printf '"k%s":{},' $(seq 50000))\"x\":1}" >"$work/value.json"
  else cp "$work/braces.json" "$work/value.json"; fi
  edit "$work/hostile.safetensors" meta "$field" "@$work/value.json"
  start=$(date +%s%N)
  expect_error "a checkpoint whose $field holds 50,000 {}" "nests deeper than 1 level|holds more than" \
    "$QKV" eval --checkpoint "$work/hostile.safetensors" --split test --data "$gen"
  ms=$((($(date +%s%N) - start) / 1000000))
  [ "$ms" -lt 10000 ] && pass || fail "a checkpoint whose $field holds 50,000 {}: refused after $ms ms"
done
cp "$ckpt" "$work/act.safetensors"
edit "$work/act.safetensors" meta config "$(python3 -c 'import sys, json; sys.path.insert(0, sys.argv[1]); import safetensors_edit as e
c = json.loads(e.read(sys.argv[2])[0]["config"]); c["activation"] = 5; print(json.dumps(c))' "$(dirname "$0")" "$ckpt")"
expect_error "a config whose activation is 5" "'activation' is not a string" "$QKV" translate --checkpoint "$work/act.safetensors" "river bank"
cp "$ckpt" "$work/extra.safetensors"
edit "$work/extra.safetensors" meta qkv_crc32d 12345678
expect_error "a checkpoint with an unknown metadata key" "metadata has an unknown key 'qkv_crc32d'" \
  "$QKV" translate --checkpoint "$work/extra.safetensors" "river bank"

# ---- outputs: a device, a pipe, a folder or a link to one is refused (issue 28 finding 5, issue 26 finding 6) ----
ln -s /dev/null "$work/null.png"
mkfifo "$work/fifo.html"
mkdir -p "$work/folder.txt"
expect_error "attend --out a link to /dev/null" "null.png: a character device, not a regular file" \
  "$QKV" attend --checkpoint "$ckpt" --out "$work/null.png" "river bank"
expect_error "attend --out a folder" "folder.txt: a directory, not a regular file" \
  "$QKV" attend --checkpoint "$ckpt" --out "$work/folder.txt" "river bank"
expect_error "explore --out a pipe" "fifo.html: a pipe, not a regular file" \
  "$QKV" explore --checkpoint "$ckpt" --out "$work/fifo.html"
rc=$( ("$QKV" attend --checkpoint "$ckpt" --format text --out /proc/self/fd/1 "river bank" 2>"$work/err" | cat >"$work/out"); echo "${PIPESTATUS[0]}")
if grep -q "/proc/self/fd/1: a pipe, not a regular file" "$work/err" && [ ! -s "$work/out" ]; then pass; else
  fail "attend --out /proc/self/fd/1 on a pipe: $(cat "$work/err")"; fi
# a link to stdout on a regular file: attend and explore refuse it, as train does, and the link stays a link
ln -s /proc/self/fd/1 "$work/stdout.png"
for cmd in "attend --checkpoint $ckpt --format text --out $work/stdout.png river bank" \
           "explore --checkpoint $ckpt --out $work/stdout.png"; do
  # shellcheck disable=SC2086
  "$QKV" $cmd >"$work/out" 2>"$work/err"; rc=$?
  if [ "$rc" -ne 0 ] && grep -q "stdout.png: a symbolic link" "$work/err" && [ -L "$work/stdout.png" ] && [ ! -s "$work/out" ]; then pass; else
    fail "${cmd%% *} --out a link to /proc/self/fd/1 (rc $rc): $(cat "$work/err")"; fi
done
expect_error "train --out a link to /proc/self/fd/1" "is not a directory" "$QKV" train "${run[@]}" --out "$work/stdout.png"
[ -L "$work/null.png" ] && [ -p "$work/fifo.html" ] && [ -c /dev/null ] && pass || fail "an output that is not a file was replaced"
expect_error "train --out a link to /dev/null" "is not a directory" "$QKV" train "${run[@]}" --out "$work/null.png"
rm -rf "$work/forced" && mkdir -p "$work/forced/model.safetensors"
expect_error "train --force where model.safetensors is a folder" "model.safetensors: a directory, not a regular file" \
  "$QKV" train "${run[@]}" --force --out "$work/forced"
expect_error "attend --layer 0x1" "--layer" "$QKV" attend --checkpoint "$ckpt" --layer 0x1 --format text "river bank"

# ---- bounded lines (issue 26 finding 4) ----
expect_error "translate < /dev/zero" "stdin:1: a line longer than 65536 bytes" \
  timeout 20 "$QKV" translate --checkpoint "$ckpt" </dev/zero
{ echo "river bank flows"; head -c 70000 /dev/zero | tr '\0' 'a'; echo; } >"$work/long.txt"
expect_error "translate --input with a 70 KB line" "long.txt:2: a line longer than 65536 bytes" \
  "$QKV" translate --checkpoint "$ckpt" --input "$work/long.txt"
mkdir -p "$work/longdata" && cp "$gen"/*.tsv "$work/longdata/"
head -c 70000 /dev/zero | tr '\0' 'a' >>"$work/longdata/valid.tsv"
expect_error "a dataset with a 70 KB line" "valid.tsv:2: a line longer than 65536 bytes" \
  "$QKV" eval --checkpoint "$ckpt" --data "$work/longdata" --split valid

# ---- one line per error, of a readable length (issue 26 finding 3) ----
nl_dir="$work/new
line"
mkdir -p "$nl_dir"
expect_error "a checkpoint path with a newline" "new\\\\nline/none.safetensors: checkpoint not found" \
  "$QKV" eval --checkpoint "$nl_dir/none.safetensors"
long_arg=$(head -c 100000 /dev/zero | tr '\0' 'x')
expect_error "a 100 KB argument" "bytes left out" "$QKV" translate --checkpoint "$work/$long_arg"
[ "$(wc -c <"$work/err")" -lt 1200 ] && pass || fail "a 100 KB argument: the error is $(wc -c <"$work/err") bytes"
python3 - "$work/dims.safetensors" "$(dirname "$0")" <<'PY'
import sys; sys.path.insert(0, sys.argv[2]); import safetensors_edit as e
e.write(sys.argv[1], {}, {"w": ("F32", [128] + [1] * 99999, b"\0" * 4)}, checksum=False)
PY
expect_error "a tensor of 100,000 dims" "'w': shape \[128, 1, 1, 1, … 99,996 more\] x F32 needs 512 bytes" \
  "$QKV" eval --checkpoint "$work/dims.safetensors"

# ---- the explorer page: data in <script> cannot end it early (issue 26 finding 5) ----
ls_sep=$'\xe2\x80\xa8'  # U+2028, LINE SEPARATOR
bad_name="$work/<!--<script> </script> $ls_sep"
mkdir -p "$bad_name" && cp "$ckpt" "$bad_name/m.safetensors"
# a vocabulary word of markup too
edit "$bad_name/m.safetensors" meta english_vocab "$(python3 -c 'import sys, json; sys.path.insert(0, sys.argv[1]); import safetensors_edit as e
words = json.loads(e.read(sys.argv[2])[0]["english_vocab"]); words[-1] = "<!--<script></script>&\u2028"; print(json.dumps(words))' "$(dirname "$0")" "$ckpt")"
"$QKV" explore --checkpoint "$bad_name/m.safetensors" --sentence "river bank <!--<script>" \
  --sentence "</script><script>alert(1)</script>" --sentence "money${ls_sep}bank & grows" \
  --out "$work/page.html" >"$work/out" 2>&1
if python3 - "$work/page.html" "$bad_name/m.safetensors" <<'PY'
import json, re, sys
page = open(sys.argv[1], encoding="utf-8").read()
start = page.index('<script type="application/json" id="qkv-data">') + len('<script type="application/json" id="qkv-data">')
end = page.index("</script>", start)
block = page[start:end]
assert not re.search(r"[<>&\u2028\u2029]", block), "raw markup characters in the data"
data = json.loads(block)
assert data["sentences"] == ["river bank <!--<script>", "</script><script>alert(1)</script>", "money\u2028bank & grows"], data["sentences"]
assert data["models"][0]["checkpoint"] == sys.argv[2]
assert data["models"][0]["english"][-1] == "<!--<script></script>&\u2028"
PY
then pass; else fail "explore: markup in sentences and the file name is escaped in the page's data: $(cat "$work/out")"; fi
expect_error "explore: a --sentence that is not UTF-8" "not valid UTF-8" \
  "$QKV" explore --checkpoint "$ckpt" --sentence "$(printf 'she \xff ate')" --out "$work/p.html"
expect_absent "explore: no page after a sentence that is not UTF-8" "$work/p.html"

echo "hostile: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
