#!/usr/bin/env bash
# tests/cli/run.sh — end-to-end checks of the qkv program on bad input: each case must print one
# clear error line on stderr, exit non-zero and leave no partial output files. Run by `make test`.
set -u
QKV=${QKV:-build/qkv}
source "$(dirname "$0")/lib.sh"

# A small real checkpoint to poke at (a few seconds of training).
"$QKV" train --epochs 1 --layers 1 --d-model 16 --d-k 8 --d-ff 32 --out "$work/tiny" >"$work/train.log" 2>&1 ||
  { echo "FAIL: could not train the tiny model"; cat "$work/train.log"; echo "0 passed, 1 failed"; exit 1; }
ckpt="$work/tiny/model.safetensors"
[ -f "$ckpt" ] && [ -f "$work/tiny/metrics.csv" ] && [ -f "$work/tiny/loss.png" ] && pass || fail "train wrote model, metrics and loss.png"
# the default positions: rotary, half the training sequences sampled from three times the layout
grep -q "^training learned attention, 1 layer, rotary positions (half sampled from [0-9]*):" "$work/train.log" &&
  grep -qF '\"positions\":\"rotary\",\"random_positions\":' "$ckpt" && pass ||
  fail "the default model is rotary with randomized positions: $(head -n 1 "$work/train.log")"

# ---- data ----
expect_error "missing data directory" "data directory '$work/nope' does not exist \(run from the qkv folder, or give --data DIR\)" \
  "$QKV" train --data "$work/nope" --out "$work/o1"
expect_absent "missing data directory" "$work/o1"

mkdir -p "$work/bad"
printf 'a b\tक ख\n' >"$work/bad/valid.tsv"; cp "$work/bad/valid.tsv" "$work/bad/test.tsv"
printf 'a b\tक ख\nno tab here\n' >"$work/bad/train.tsv"
expect_error "malformed TSV: missing tab" "train.tsv:2: missing tab" "$QKV" train --data "$work/bad" --out "$work/o2"
expect_absent "malformed TSV" "$work/o2"
printf 'a b\t \n' >"$work/bad/train.tsv"
expect_error "malformed TSV: empty side" "train.tsv:1: empty hindi side" "$QKV" train --data "$work/bad" --out "$work/o2"
printf 'a \xff b\tक\n' >"$work/bad/train.tsv"
expect_error "malformed TSV: invalid UTF-8" "train.tsv:1: invalid UTF-8" "$QKV" train --data "$work/bad" --out "$work/o2"

# ---- options ----
expect_error "unknown option" "--frobnicate" "$QKV" train --frobnicate
expect_error "unknown command" "qkv: error" "$QKV" fly
expect_error "mistyped command" "did you mean 'train'\?" "$QKV" trian
expect_error "mistyped flag" "did you mean --epochs\?" "$QKV" train --epoch 1 --out "$work/o1"
expect_absent "mistyped flag" "$work/o1"
expect_error "bad attention mode" "attention" "$QKV" train --attention sideways
expect_error "missing CUDA device or build" "CUDA|cuda" "$QKV" train --device cuda:7 --epochs 1 --out "$work/o3"
grep -q "use --device cpu" "$work/err" && pass || fail "no GPU: the error names the fix: $(cat "$work/err")"
expect_absent "cuda failure" "$work/o3"
expect_error "bench on a missing device fails before measuring" "CUDA|cuda" "$QKV" bench --device cpu --device cuda:7
grep -q "ms/step" "$work/out" && fail "bench measured the CPU before failing on cuda:7" || pass

# ---- checkpoints ----
expect_error "missing checkpoint" "checkpoint not found" "$QKV" eval --checkpoint "$work/none.safetensors"
head -c 100 "$ckpt" >"$work/truncated.safetensors"
expect_error "truncated checkpoint" "truncated|larger than the file|shorter" "$QKV" eval --checkpoint "$work/truncated.safetensors"
cp "$ckpt" "$work/corrupt.safetensors"
printf '\xff\xff\xff\xff\xff\xff\xff\x7f' | dd of="$work/corrupt.safetensors" bs=1 count=8 conv=notrunc 2>/dev/null
expect_error "corrupt header size" "header" "$QKV" eval --checkpoint "$work/corrupt.safetensors"
"$QKV" train --epochs 1 --d-model 12 --d-k 8 --d-ff 32 --out "$work/other" >/dev/null 2>&1
/usr/bin/env python3 - "$ckpt" "$work/other/model.safetensors" "$work/mixed.safetensors" <<'EOF' 2>/dev/null
import json, struct, sys
def read(p):
    b = open(p, 'rb').read(); n = struct.unpack('<Q', b[:8])[0]
    return json.loads(b[8:8 + n]), b[8 + n:]
h_good, _ = read(sys.argv[1]); h_other, data = read(sys.argv[2])
h_other['__metadata__'] = h_good['__metadata__']   # config of one model, weights of another
h_other['__metadata__'].pop('qkv_crc32c')          # as another tool writes it: no checksum
head = json.dumps(h_other).encode(); head += b' ' * (-len(head) % 8)
open(sys.argv[3], 'wb').write(struct.pack('<Q', len(head)) + head + data)
EOF
if [ -f "$work/mixed.safetensors" ]; then
  expect_error "checkpoint from a different config" "the config describes a model of [0-9]+ parameters but the file holds [0-9]+ values" \
    "$QKV" eval --checkpoint "$work/mixed.safetensors"
else
  fail "could not build the mixed-config checkpoint (python3 missing?)"
fi

# ---- sentences ----
expect_error "empty sentence (translate)" "sentence is empty" "$QKV" translate --checkpoint "$ckpt" "   "
expect_error "empty sentence (attend)" "sentence is empty" "$QKV" attend --checkpoint "$ckpt" ""
long_sentence=$(printf 'w%.0s ' $(seq 300))   # longer than any sentence qkv reads (the default's rotary positions read 256)
expect_error "sentence too long" "has 300 words; qkv reads at most 256" "$QKV" translate --checkpoint "$ckpt" "$long_sentence"
expect_error "sentence not UTF-8" "not valid UTF-8" "$QKV" attend --checkpoint "$ckpt" "$(printf 'she \xff ate')"
"$QKV" translate --checkpoint "$ckpt" "she ate a zorbleflax" >"$work/out" 2>"$work/err"
if [ $? -eq 0 ] && grep -q "unknown words mapped to <unk>: 'zorbleflax'" "$work/err"; then pass; else fail "unknown word warning: $(cat "$work/err")"; fi
# as people type: unquoted words, capitals and sentence punctuation give the lower-case sentence's translation
"$QKV" translate --checkpoint "$ckpt" "the exam was a piece of cake" >"$work/quoted" 2>/dev/null
"$QKV" translate --checkpoint "$ckpt" The exam was a piece of cake. >"$work/out" 2>"$work/err"
if [ $? -eq 0 ] && cmp -s "$work/out" "$work/quoted" && [ "$(wc -l <"$work/err")" -eq 1 ] &&
   grep -q "note: read as 'the exam was a piece of cake'" "$work/err"; then pass; else fail "unquoted, capitalised sentence: $(cat "$work/out" "$work/err")"; fi
"$QKV" translate --checkpoint "$ckpt" "she ate a piece of cak" >"$work/out" 2>"$work/err"
if [ $? -eq 0 ] && grep -q "'cak' (did you mean .*'cake'" "$work/err"; then pass; else fail "unknown word suggestion: $(cat "$work/err")"; fi
printf 'river bank flows
River bank flows!
Money bank grows.
' | "$QKV" translate --checkpoint "$ckpt" >"$work/out" 2>"$work/err"
if [ $? -eq 0 ] && [ "$(cut -f1 "$work/out" | tr '\n' '|')" = "river bank flows|river bank flows|money bank grows|" ] &&
   [ "$(grep -c 'note: read as' "$work/err")" -eq 1 ] && grep -q "^stdin:2: note: read as 'river bank flows'" "$work/err"; then
  pass
else
  fail "translate from stdin normalises each line and notes it once: $(cat "$work/out" "$work/err")"
fi
expect_error "a sentence of punctuation alone" "sentence is empty" "$QKV" translate --checkpoint "$ckpt" "..."
# stdin on a terminal: one hint line, then Ctrl-D ends with nothing translated
if python3 - "$QKV" "$ckpt" <<'PY'
import os, pty, subprocess, sys
primary, secondary = pty.openpty()
p = subprocess.Popen([sys.argv[1], "translate", "--checkpoint", sys.argv[2]], stdin=secondary,
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
os.close(secondary)
os.write(primary, b"\x04")
out, err = p.communicate(timeout=120)
sys.exit(0 if p.returncode == 0 and err.startswith(b"reading sentences from stdin, one per line; Ctrl-D ends\n") else 1)
PY
then pass; else fail "translate on a terminal prints a hint before reading stdin"; fi
"$QKV" attend --checkpoint "$ckpt" --format text River bank flows >"$work/out" 2>/dev/null && grep -q "^river bank flows  ->" "$work/out" && pass ||
  fail "attend joins unquoted words: $(head -3 "$work/out")"
"$QKV" attend --checkpoint "$ckpt" --format json "she ate a zorbleflax" >"$work/out" 2>/dev/null
if grep -q '"<unk>"' "$work/out"; then pass; else fail "attend shows unknown words as <unk>"; fi

# ---- pictures ----
QKV_FONT=/nonexistent/font.ttf "$QKV" attend --checkpoint "$ckpt" --out "$work/a.png" "she ate a piece of cake" >/dev/null 2>"$work/err"
if [ $? -ne 0 ] && grep -q "fonts-lohit-deva" "$work/err" && [ "$(wc -l <"$work/err")" -eq 1 ]; then pass; else fail "missing font: $(cat "$work/err")"; fi
expect_absent "missing font" "$work/a.png"
"$QKV" attend --checkpoint "$ckpt" --out "$work/a.png" "she ate a piece of cake" >/dev/null 2>&1 && [ -s "$work/a.png" ] && pass || fail "attend writes a PNG"
"$QKV" attend --checkpoint "$ckpt" --out "$work/a.txt" "she ate a piece of cake" >/dev/null 2>&1 &&
  grep -q "rows are queries" "$work/a.txt" && ! grep -q "PNG" "$work/a.txt" && pass || fail "attend --out a.txt writes the text table"
"$QKV" attend --checkpoint "$ckpt" --out "$work/a.json" "she ate a piece of cake" >/dev/null 2>&1 &&
  python3 -c 'import json, sys; assert "weights" in json.load(open(sys.argv[1]))' "$work/a.json" && pass || fail "attend --out a.json writes JSON"
"$QKV" attend --checkpoint "$ckpt" --out "$work/a.csv" "she ate a piece of cake" >/dev/null 2>&1 &&
  /usr/bin/python3 -c '
import csv, sys
rows = list(csv.reader(open(sys.argv[1], encoding="utf-8")))
n = len(rows[0]) - 1
empty = 0
for row in rows[1:]:
    assert len(row) == n + 1, row
    cells = row[1:]
    empty += cells.count("")
    assert abs(sum(float(c) for c in cells if c) - 1) < 1e-4, row  # the weights a query sees sum to 1
assert empty > 0  # the source words cannot see the translation: masked, written as empty fields
' "$work/a.csv" && pass || fail "attend --out a.csv: masked cells are empty fields, each row sums to 1: $(head -3 "$work/a.csv")"
expect_error "attend: --format against --out's extension" "extension .csv but --format is png" \
  "$QKV" attend --checkpoint "$ckpt" --out "$work/b.csv" --format png "she ate a piece of cake"
expect_absent "attend: --format against --out's extension" "$work/b.csv"
ls "$work"/*.tmp* >/dev/null 2>&1 && fail "temporary files left behind" || pass

# ---- layers and generalisation splits (a small data dir written here) ----
gen="$work/gen"
mkdir -p "$gen"
cat >"$gen/train.tsv" <<'EOF'
money bank grows	पैसा बढ़ता है
river bank flows	नदी बहती है
she ate a piece of cake	उसने केक का एक टुकड़ा खाया
the exam was a piece of cake	परीक्षा बहुत आसान थी
he sat on the bank	वह किनारे पर बैठा
EOF
printf 'money bank flows\tपैसा बहता है\n' >"$gen/valid.tsv"
printf 'river bank grows\tनदी बढ़ती है\n' >"$gen/test.tsv"
printf 'the cake was a piece of exam\tकेक बहुत आसान था\n' >"$gen/idiom_context.tsv"
printf 'he sat on the money bank\tवह बैंक पर बैठा\n' >"$gen/sense_context.tsv"
printf 'bank river flows\tकिनारा नदी बहता\nzorble bank grows\tज़ोरबल बढ़ता है\n' >"$gen/role_swap.tsv"  # unknown words
small=(--epochs 1 --d-model 8 --d-k 4 --d-ff 16 --data "$gen")
expect_error "--layers 0" "--layers: must be a whole number from 1 to 16, got '0'" "$QKV" train --layers 0 "${small[@]}" --out "$work/o4"
expect_absent "--layers 0" "$work/o4"
expect_error "--layers 17" "--layers: must be a whole number from 1 to 16, got '17'" "$QKV" train --layers 17 "${small[@]}" --out "$work/o4"
# range messages in words, and --help lines that read `--layers N  ... [8]` (no CLI11 type strings)
expect_error "--lr 0" "--lr: must be > 0, got 0 \(see" "$QKV" train --lr 0 "${small[@]}" --out "$work/o4"
expect_error "--weight-decay -1" "--weight-decay: must be >= 0, got -1 \(see" "$QKV" train --weight-decay -1 "${small[@]}" --out "$work/o4"
expect_error "--dropout 2" "--dropout: must be from 0 to 0.95, got 2 \(see" "$QKV" train --dropout 2 "${small[@]}" --out "$work/o4"
expect_error "--clip 0" "--clip: must be > 0, got 0 \(see" "$QKV" train --clip 0 "${small[@]}" --out "$work/o4"
expect_error "--device tpu" "--device: unknown device 'tpu' \(expected cpu, cuda or cuda:N\)" \
  "$QKV" train --device tpu "${small[@]}" --out "$work/o4"
expect_absent "out-of-range flags" "$work/o4"
"$QKV" train --help >"$work/out"
grep -Eq '^  --layers N +stacked .*1 to 16 \[8\]$' "$work/out" && grep -Eq '^  --lr X +.*\[0\.005\]$' "$work/out" &&
  grep -Eq '^  --force +start over' "$work/out" && ! grep -Eq ':INT|INT:|FLOAT|in \[[0-9]|=[0-9]' "$work/out" && pass ||
  fail "train --help: each line reads '--flag TYPE  description [default]': $(grep -E -- '--layers|--lr|--force' "$work/out")"
expect_absent "--layers 17" "$work/o4"
if "$QKV" train --layers 2 "${small[@]}" --positions absolute --out "$work/two" >"$work/out" 2>"$work/err" && [ -f "$work/two/model.safetensors" ]; then
  pass
else
  fail "train --layers 2: $(cat "$work/err")"
fi
two="$work/two/model.safetensors"
"$QKV" eval --checkpoint "$two" --data "$gen" >"$work/out" 2>"$work/err"
if [ $? -eq 0 ] && [ "$(awk '{ print $1 }' "$work/out" | tr '\n' ' ')" = "split valid test idiom_context sense_context role_swap " ]; then
  pass
else
  fail "eval --split all: one row per split present but train: $(cat "$work/out" "$work/err")"
fi
"$QKV" eval --checkpoint "$two" --data "$gen" --split train >"$work/out" 2>&1
grep -qE '^train +5 ' "$work/out" && pass || fail "eval --split train: $(cat "$work/out")"
# --no-cache decodes by recomputing the prefix: the same figures but the decoding speed column
"$QKV" eval --checkpoint "$two" --data "$gen" --split train --no-cache >"$work/out2" 2>&1
if [ $? -eq 0 ] && [ "$(awk '{ $NF = ""; print }' "$work/out")" = "$(awk '{ $NF = ""; print }' "$work/out2")" ]; then
  pass
else
  fail "eval --no-cache differs from the cached decoding: $(cat "$work/out" "$work/out2")"
fi
"$QKV" eval --checkpoint "$two" --data "$gen" --split role_swap >"$work/out" 2>"$work/err"
if [ $? -eq 0 ] && grep -qE '^role_swap +2 ' "$work/out" && [ "$(wc -l <"$work/out")" -eq 2 ]; then pass; else fail "eval --split role_swap: $(cat "$work/out")"; fi
expect_error "eval --split deeper without deeper.tsv" "split 'deeper' is not in $gen: $gen/deeper.tsv does not exist \(this folder has: valid, test, idiom_context, sense_context, role_swap; or give a path to a .tsv file\)" \
  "$QKV" eval --checkpoint "$two" --data "$gen" --split deeper
expect_error "eval --split bogus" "split 'bogus' is not in $gen: $gen/bogus.tsv does not exist" \
  "$QKV" eval --checkpoint "$two" --data "$gen" --split bogus
expect_error "eval --split a missing file" "split file '$work/nowhere/x.tsv' does not exist" \
  "$QKV" eval --checkpoint "$two" --data "$gen" --split "$work/nowhere/x.tsv"
printf 'money bank grows\tपैसा बढ़ता है\nno tab here\n' >"$work/broken.tsv"
expect_error "eval --split a malformed file" "broken.tsv:2: missing tab" "$QKV" eval --checkpoint "$two" --split "$work/broken.tsv"
# any NAME.tsv of --data is a split, and any .tsv file by its path
printf 'money bank grows\tपैसा बढ़ता है\nriver bank flows\tनदी बहती है\nhe sat on the bank\tवह किनारे पर बैठा\n' >"$work/mine.tsv"
"$QKV" eval --checkpoint "$two" --split "$work/mine.tsv" >"$work/out" 2>&1
if [ $? -eq 0 ] && grep -qE "^$work/mine.tsv +3 " "$work/out"; then pass; else fail "eval --split FILE.tsv: $(cat "$work/out")"; fi
cp "$work/mine.tsv" "$gen/mytest.tsv"
"$QKV" eval --checkpoint "$two" --data "$gen" --split mytest >"$work/out" 2>&1
if [ $? -eq 0 ] && grep -qE '^mytest +3 ' "$work/out"; then pass; else fail "eval --split mytest (DIR/mytest.tsv): $(cat "$work/out")"; fi
"$QKV" eval --checkpoint "$two" --data "$gen" >"$work/out" 2>"$work/err"
if [ $? -eq 0 ] && [ "$(awk '{ print $1 }' "$work/out" | tr '\n' ' ')" = "split valid test idiom_context sense_context role_swap mytest " ]; then
  pass
else
  fail "eval --split all covers every .tsv but train, the user's own last: $(cat "$work/out" "$work/err")"
fi
rm -f "$gen/mytest.tsv"
expect_error "attend --layer past the last" "--layer 3 is out of range: .*two/model.safetensors has 2 layers \(valid: 1 to 2\)" \
  "$QKV" attend --checkpoint "$two" --layer 3 "money bank grows"
expect_error "attend --layer 0" "--layer 0 is out of range: .* \(valid: 1 to 2\)" "$QKV" attend --checkpoint "$two" --layer 0 "money bank grows"
expect_error "attend --layer 2 of a one-layer model" "--layer 2 is out of range: .* has 1 layer \(valid: 1\)" \
  "$QKV" attend --checkpoint "$ckpt" --layer 2 "money bank grows"
"$QKV" attend --checkpoint "$two" --layer 1 --format json "money bank grows" >"$work/out" 2>&1
grep -q '"layer": 1,' "$work/out" && grep -q '"layers": 2,' "$work/out" && pass || fail "attend --layer 1 --format json: $(head -c 300 "$work/out")"
"$QKV" attend --checkpoint "$two" --format text "money bank grows" >"$work/out" 2>&1
grep -q "layer 2 of 2" "$work/out" && pass || fail "attend shows the last layer by default: $(head -n 1 "$work/out")"
# a split sentence longer than every training sentence: an absolute model skips it, saying so once
# per split; a rotary one reads and translates it
printf 'money bank grows and river bank flows fast\tपैसा\nmoney bank grows\tपैसा बढ़ता है\n' >"$gen/deeper.tsv"
"$QKV" eval --checkpoint "$two" --data "$gen" --split deeper >"$work/out" 2>"$work/err"
if [ $? -eq 0 ] && grep -qE '^deeper +1 ' "$work/out" && [ "$(grep -c skipped "$work/err")" -eq 1 ] &&
   grep -q "deeper: 1 sentence longer than the model's 7 source and 7 target positions skipped (its absolute positions" "$work/err"; then
  pass
else
  fail "eval: an absolute model skips a longer split sentence with one line: $(cat "$work/out" "$work/err")"
fi
if "$QKV" train "${small[@]}" --positions absolute --out "$work/o5" >"$work/out" 2>&1 && grep -q "deeper: 1 sentence longer than the model's 7 source" "$work/out"; then
  pass
else
  fail "train: a split with a longer sentence is trained beside, its sentence skipped: $(tail -n 3 "$work/out")"
fi
if "$QKV" train "${small[@]}" --positions rotary --out "$work/rotary" >"$work/out" 2>&1 && ! grep -q "skipped" "$work/out" &&
   grep -q "^training learned attention, [0-9]* layers\?, rotary positions (half sampled from 42):" "$work/out"; then
  pass
else
  fail "train --positions rotary with a longer split sentence: $(tail -n 3 "$work/out")"
fi
"$QKV" eval --checkpoint "$work/rotary/model.safetensors" --data "$gen" --split deeper >"$work/out" 2>"$work/err"
if [ $? -eq 0 ] && grep -qE '^deeper +2 ' "$work/out" && ! grep -q skipped "$work/err"; then pass; else fail "eval: a rotary model reads the longer sentence: $(cat "$work/out" "$work/err")"; fi
longer="money bank grows and river bank flows fast and she ate a piece of cake"  # 15 words, train's longest 7
if "$QKV" translate --checkpoint "$work/rotary/model.safetensors" "$longer" >"$work/out" 2>"$work/err" && [ -s "$work/out" ]; then
  pass
else
  fail "translate: a rotary model translates past its layout: $(cat "$work/err")"
fi
if "$QKV" train "${small[@]}" --positions alibi --out "$work/alibi" >/dev/null 2>&1 &&
   "$QKV" translate --checkpoint "$work/alibi/model.safetensors" "$longer" >"$work/out" 2>"$work/err" && [ -s "$work/out" ]; then
  pass
else
  fail "translate: an alibi model translates past its layout: $(cat "$work/err")"
fi
# the decode limit (--max-length): each sentence's own, reported when reached, bounded
"$QKV" translate --checkpoint "$work/rotary/model.safetensors" --max-length 2 "$longer" >"$work/out" 2>"$work/err"
if [ $? -eq 0 ] && [ "$(wc -w <"$work/out")" -le 2 ] &&
   { [ "$(wc -w <"$work/out")" -lt 2 ] || grep -q "note: the translation reached its limit of 2 Hindi words without ending and was cut there (--max-length raises it)" "$work/err"; }; then
  pass
else
  fail "translate --max-length 2: at most 2 words, a cut said on stderr: $(cat "$work/out" "$work/err")"
fi
printf 'money bank grows\n%s\n' "$longer" >"$work/beside.txt"
"$QKV" translate --checkpoint "$work/rotary/model.safetensors" "money bank grows" >"$work/alone" 2>/dev/null
"$QKV" translate --checkpoint "$work/rotary/model.safetensors" --input "$work/beside.txt" >"$work/out" 2>/dev/null
if [ "$(head -n 1 "$work/out" | cut -f2)" = "$(cat "$work/alone")" ]; then pass; else
  fail "translate: a sentence beside a longer one translates as it does alone: $(cat "$work/alone") / $(cat "$work/out")"; fi
"$QKV" eval --checkpoint "$work/rotary/model.safetensors" --data "$gen" --split deeper --max-length 1 --format json >"$work/out" 2>"$work/err"
if [ $? -eq 0 ] && python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["splits"][0]; sys.exit(0 if r["cut_at_limit"] >= 1 and r["stopped_early"] >= 1 and r["exact_match"] == 0 else 1)' "$work/out"; then
  pass
else
  fail "eval --max-length 1 counts the cut and early stops: $(cat "$work/out" "$work/err")"
fi
"$QKV" eval --checkpoint "$work/rotary/model.safetensors" --data "$gen" --split deeper --oracle-length --format json >"$work/out" 2>"$work/err"
if [ $? -eq 0 ] && python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["splits"][0]; sys.exit(0 if r["stopped_early"] == 0 and r["stopped_late"] == 0 and r["cut_at_limit"] == 0 else 1)' "$work/out"; then
  pass
else
  fail "eval --oracle-length: no early or late stops, no cuts: $(cat "$work/out" "$work/err")"
fi
# a reference holding a Hindi word the model's vocabulary lacks is counted: no translation can match it
{ head -n 2 "$gen/deeper.tsv"; head -n 1 "$gen/deeper.tsv" | sed 's/\t\(.*\)$/\t\1 अनदेखा/'; } >"$work/unreachable.tsv"
"$QKV" eval --checkpoint "$work/rotary/model.safetensors" --data "$gen" --split "$work/unreachable.tsv" --format json >"$work/out" 2>"$work/err"
if [ $? -eq 0 ] && python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["splits"][0]; sys.exit(0 if r["unreachable"] == 1 and r["sentences"] == 3 and r["exact_match"] <= 2 / 3 else 1)' "$work/out" &&
   grep -q "1 of 3 references hold a Hindi word the model's vocabulary lacks, so no translation can match them: exact match is at most 66.67%" "$work/err"; then
  pass
else
  fail "eval counts the references it cannot match: $(cat "$work/out" "$work/err")"
fi
# noisy-channel reranking: a model trained --reverse on the same data reranks the forward model's beam
if "$QKV" train "${small[@]}" --positions rotary --reverse --out "$work/reverse" >"$work/out" 2>&1; then pass; else
  fail "train --reverse: $(tail -n 3 "$work/out")"; fi
rev="$work/reverse/model.safetensors"
for s in "money bank grows" "$longer"; do  # a beam of 1 holds greedy decoding's translation alone
  greedy=$("$QKV" translate --checkpoint "$work/rotary/model.safetensors" "$s" 2>/dev/null)
  reranked=$("$QKV" translate --checkpoint "$work/rotary/model.safetensors" --channel "$rev" --beam 1 "$s" 2>/dev/null)
  if [ -n "$greedy" ] && [ "$greedy" = "$reranked" ]; then pass; else
    fail "translate --channel --beam 1 gives greedy decoding's translation: '$greedy' / '$reranked'"; fi
done
"$QKV" translate --checkpoint "$work/rotary/model.safetensors" --channel "$rev" "money bank grows" >"$work/alone" 2>/dev/null
"$QKV" translate --checkpoint "$work/rotary/model.safetensors" --channel "$rev" --input "$work/beside.txt" >"$work/out" 2>/dev/null
if [ -s "$work/alone" ] && [ "$(head -n 1 "$work/out" | cut -f2)" = "$(cat "$work/alone")" ]; then pass; else
  fail "translate --channel: a sentence beside a longer one translates as it does alone: $(cat "$work/alone") / $(cat "$work/out")"; fi
"$QKV" eval --checkpoint "$work/rotary/model.safetensors" --data "$gen" --split deeper --channel "$rev" --beam 3 --format json >"$work/out" 2>"$work/err"
if [ $? -eq 0 ] && python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["splits"][0]; sys.exit(0 if r["sentences"] == 2 else 1)' "$work/out"; then
  pass
else
  fail "eval --channel: $(cat "$work/out" "$work/err")"
fi
expect_error "--greedy with --channel" "(--greedy excludes --channel|--channel excludes --greedy)" \
  "$QKV" translate --checkpoint "$work/rotary/model.safetensors" --greedy --channel "$rev" "money bank grows"
# channel.safetensors beside the checkpoint reranks by default, said on stderr; --greedy decodes without it
cp "$rev" "$work/rotary/channel.safetensors"
"$QKV" translate --checkpoint "$work/rotary/model.safetensors" --input "$work/beside.txt" >"$work/beside_auto" 2>"$work/err"
"$QKV" translate --checkpoint "$work/rotary/model.safetensors" --channel "$rev" --input "$work/beside.txt" >"$work/beside_named" 2>/dev/null
if cmp -s "$work/beside_auto" "$work/beside_named" && grep -q "note: reranking with .*rotary/channel.safetensors, the channel model beside the checkpoint (--greedy: without it)" "$work/err"; then
  pass
else
  fail "translate: the channel beside the checkpoint reranks, said on stderr: $(cat "$work/err")"
fi
greedy=$("$QKV" translate --checkpoint "$work/rotary/model.safetensors" --greedy "money bank grows" 2>"$work/err")
rm "$work/rotary/channel.safetensors"
if [ "$greedy" = "$("$QKV" translate --checkpoint "$work/rotary/model.safetensors" "money bank grows" 2>/dev/null)" ] && ! grep -q reranking "$work/err"; then
  pass
else
  fail "translate --greedy: the channel beside the checkpoint left out: '$greedy' $(cat "$work/err")"
fi
for bad in 0 65 four; do
  expect_error "translate --beam $bad" "--beam: must be a whole number (from 1 to 64|in decimal digits), got '$bad'" \
    "$QKV" translate --checkpoint "$work/rotary/model.safetensors" --channel "$rev" --beam "$bad" "money bank grows"
done
expect_error "a channel that is not the model turned round" "its vocabularies .* are not this model's turned round .*qkv train --reverse" \
  "$QKV" translate --checkpoint "$work/rotary/model.safetensors" --channel "$work/alibi/model.safetensors" "money bank grows"
expect_error "a missing channel" "none.safetensors" \
  "$QKV" eval --checkpoint "$work/rotary/model.safetensors" --data "$gen" --split deeper --channel "$work/none.safetensors"
"$QKV" train "${small[@]}" --positions absolute --reverse --out "$work/reverse_absolute" >/dev/null 2>&1
expect_error "a channel tied to its layout" "a channel model must read any length \(rotary or alibi positions\); this one has absolute positions" \
  "$QKV" translate --checkpoint "$work/rotary/model.safetensors" --channel "$work/reverse_absolute/model.safetensors" "money bank grows"
# a right-to-left model (train --right-to-left) writes last word first; translate and eval read it in
# reading order, and its beam and scores join the channel's rerank
mkdir -p "$work/memo" && for f in train valid test; do cp "$gen/train.tsv" "$work/memo/$f.tsv"; done  # learnt by heart
r2l=(--epochs 60 --d-model 16 --d-k 8 --d-ff 32 --data "$work/memo" --positions rotary)
if "$QKV" train "${r2l[@]}" --right-to-left --out "$work/r2l" >"$work/out" 2>&1 &&
   "$QKV" train "${r2l[@]}" --out "$work/l2r" >/dev/null 2>&1 &&
   "$QKV" train "${r2l[@]}" --reverse --out "$work/r2l_channel" >/dev/null 2>&1; then pass; else
  fail "train --right-to-left: $(tail -n 3 "$work/out")"; fi
cut -f1 "$gen/train.tsv" >"$work/train.en"
"$QKV" translate --checkpoint "$work/r2l/model.safetensors" --input "$work/train.en" 2>/dev/null | cut -f2 >"$work/r2l.out"
right=$(paste "$work/r2l.out" <(cut -f2 "$gen/train.tsv") | awk -F'\t' '$1 == $2' | wc -l)
"$QKV" eval --checkpoint "$work/r2l/model.safetensors" --data "$work/memo" --split train --format json >"$work/out" 2>"$work/err"
if [ "$right" -ge 4 ] && python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["splits"][0]; sys.exit(0 if round(r["exact_match"] * 5) == int(sys.argv[2]) else 1)' "$work/out" "$right"; then
  pass
else
  fail "a right-to-left model: translate in reading order ($right of 5 right), eval agrees: $(cat "$work/out" "$work/err")"
fi
both=(--checkpoint "$work/l2r/model.safetensors" --channel "$work/r2l_channel/model.safetensors" --right-to-left "$work/r2l/model.safetensors")
one=$("$QKV" translate "${both[@]}" --beam 1 "$longer" 2>"$work/err")
if [ -n "$one" ] && { [ "$one" = "$("$QKV" translate --checkpoint "$work/l2r/model.safetensors" "$longer" 2>/dev/null)" ] ||
                      [ "$one" = "$("$QKV" translate --checkpoint "$work/r2l/model.safetensors" "$longer" 2>/dev/null)" ]; }; then
  pass
else
  fail "translate --right-to-left --beam 1 keeps one of the two greedy translations: '$one' $(cat "$work/err")"
fi
cp "$work/r2l_channel/model.safetensors" "$work/l2r/channel.safetensors"
cp "$work/r2l/model.safetensors" "$work/l2r/right_to_left.safetensors"
"$QKV" translate --checkpoint "$work/l2r/model.safetensors" --input "$work/train.en" >"$work/auto" 2>"$work/err"
"$QKV" translate "${both[@]}" --input "$work/train.en" >"$work/named" 2>/dev/null
if [ -s "$work/auto" ] && cmp -s "$work/auto" "$work/named" && grep -q "note: reranking with .*l2r/right_to_left.safetensors, the right-to-left model beside the checkpoint" "$work/err"; then
  pass
else
  fail "translate: the right-to-left model beside the checkpoint joins the rerank, said on stderr: $(cat "$work/err")"
fi
# a second channel trained --reverse --right-to-left scores the English turned round: named, or beside the checkpoint
if "$QKV" train "${r2l[@]}" --reverse --right-to-left --out "$work/r2l_rchannel" >/dev/null 2>&1; then pass; else
  fail "train --reverse --right-to-left"; fi
"$QKV" translate "${both[@]}" --channel "$work/r2l_rchannel/model.safetensors" --input "$work/train.en" >"$work/named2" 2>/dev/null
right=$(paste <(cut -f2 "$work/named2") <(cut -f2 "$gen/train.tsv") | awk -F'\t' '$1 == $2' | wc -l)
cp "$work/r2l_rchannel/model.safetensors" "$work/l2r/channel_right_to_left.safetensors"
"$QKV" translate --checkpoint "$work/l2r/model.safetensors" --input "$work/train.en" >"$work/auto2" 2>"$work/err"
if [ "$right" -ge 4 ] && cmp -s "$work/auto2" "$work/named2" && grep -q "note: reranking with .*l2r/channel_right_to_left.safetensors, the right-to-left channel model beside" "$work/err"; then
  pass
else
  fail "translate: both channels, named or beside the checkpoint ($right of 5 right): $(cat "$work/err")"
fi
rm "$work/l2r/channel_right_to_left.safetensors" "$work/l2r/right_to_left.safetensors"
one=$("$QKV" translate --checkpoint "$work/l2r/model.safetensors" --channel "$work/r2l_rchannel/model.safetensors" --beam 1 "$longer" 2>/dev/null)
if [ -n "$one" ] && [ "$one" = "$("$QKV" translate --checkpoint "$work/l2r/model.safetensors" --greedy "$longer" 2>/dev/null)" ]; then pass; else
  fail "translate: a right-to-left channel alone, --beam 1, keeps greedy decoding's translation: '$one'"; fi
# an ensemble: another seed's left-to-right model and channel join the rerank (--ensemble, --channel again)
if "$QKV" train "${r2l[@]}" --seed 2 --out "$work/l2r_2" >/dev/null 2>&1 &&
   "$QKV" train "${r2l[@]}" --seed 2 --reverse --out "$work/r2l_channel_2" >/dev/null 2>&1; then pass; else
  fail "train a second seed's models"; fi
ensemble=("${both[@]}" --channel "$work/r2l_rchannel/model.safetensors" --channel "$work/r2l_channel_2/model.safetensors" --ensemble "$work/l2r_2/model.safetensors")
"$QKV" translate "${ensemble[@]}" --input "$work/train.en" >"$work/named3" 2>"$work/err"
right=$(paste <(cut -f2 "$work/named3") <(cut -f2 "$gen/train.tsv") | awk -F'\t' '$1 == $2' | wc -l)
if [ "$right" -ge 4 ]; then pass; else fail "translate --ensemble: $right of 5 memorised sentences right: $(cat "$work/err")"; fi
one=$("$QKV" translate "${ensemble[@]}" --beam 1 "$longer" 2>/dev/null)
if [ -n "$one" ] && for m in l2r r2l l2r_2; do "$QKV" translate --checkpoint "$work/$m/model.safetensors" "$longer" 2>/dev/null; done | grep -qxF "$one"; then
  pass
else
  fail "translate --ensemble --beam 1 keeps one of the three greedy translations: '$one'"
fi
expect_error "--ensemble: a right-to-left model" "r2l/model.safetensors: not a left-to-right model for this one: it was trained with .qkv train --right-to-left. \(give it as --right-to-left\)" \
  "$QKV" translate "${both[@]:0:4}" --ensemble "$work/r2l/model.safetensors" "money bank grows"
expect_error "--ensemble: a channel" "r2l_channel_2/model.safetensors: not a left-to-right model for this one: it was trained with .qkv train --reverse. \(give it as --channel\)" \
  "$QKV" translate "${both[@]:0:4}" --ensemble "$work/r2l_channel_2/model.safetensors" "money bank grows"
expect_error "--ensemble without a channel" "--right-to-left and --ensemble join a channel's rerank: give --channel too" \
  "$QKV" translate --checkpoint "$work/rotary/model.safetensors" --ensemble "$work/l2r_2/model.safetensors" "money bank grows"
expect_error "--greedy with --ensemble" "(--greedy excludes --ensemble|--ensemble excludes --greedy)" \
  "$QKV" translate --checkpoint "$work/l2r/model.safetensors" --greedy --ensemble "$work/l2r_2/model.safetensors" "money bank grows"
expect_error "--right-to-left: a left-to-right model" "l2r/model.safetensors: not a right-to-left model for this one: it was not trained with .qkv train --right-to-left." \
  "$QKV" translate "${both[@]:0:4}" --right-to-left "$work/l2r/model.safetensors" "money bank grows"
"$QKV" train "${small[@]}" --positions absolute --right-to-left --out "$work/r2l_absolute" >/dev/null 2>&1
expect_error "--right-to-left: a model tied to its layout" "not a right-to-left model for this one: it must read any length \(rotary or alibi positions\)" \
  "$QKV" translate "${both[@]:0:4}" --right-to-left "$work/r2l_absolute/model.safetensors" "money bank grows"
mkdir -p "$work/other_data" && head -n 2 "$gen/train.tsv" >"$work/other_data/train.tsv"
cp "$gen/valid.tsv" "$work/other_data/valid.tsv" && cp "$gen/test.tsv" "$work/other_data/test.tsv"
"$QKV" train --epochs 1 --d-model 8 --d-k 4 --d-ff 16 --data "$work/other_data" --positions rotary --right-to-left --out "$work/r2l_other" >/dev/null 2>&1
expect_error "--right-to-left: another data's model" "not a right-to-left model for this one: its vocabularies are not this model's \(train it on the same data\)" \
  "$QKV" translate "${both[@]:0:4}" --right-to-left "$work/r2l_other/model.safetensors" "money bank grows"
expect_error "a right-to-left model as the one reranked" "this checkpoint writes right to left: the rerank takes it as --right-to-left beside a left-to-right model" \
  "$QKV" translate --checkpoint "$work/r2l/model.safetensors" --channel "$work/r2l_channel/model.safetensors" "money bank grows"
expect_error "--greedy with --right-to-left" "(--greedy excludes --right-to-left|--right-to-left excludes --greedy)" \
  "$QKV" translate --checkpoint "$work/l2r/model.safetensors" --greedy --right-to-left "$work/r2l/model.safetensors" "money bank grows"
expect_error "eval --channel with --oracle-length" "--channel, --right-to-left and --ensemble rerank a beam: they take neither --oracle-length nor --no-cache" \
  "$QKV" eval --checkpoint "$work/rotary/model.safetensors" --data "$gen" --split deeper --channel "$rev" --oracle-length
expect_error "eval --right-to-left with --no-cache" "--channel, --right-to-left and --ensemble rerank a beam: they take neither --oracle-length nor --no-cache" \
  "$QKV" eval --checkpoint "$work/l2r/model.safetensors" --data "$work/memo" --split train --right-to-left "$work/r2l/model.safetensors" --no-cache
for bad in 0 -3 1025 two; do
  expect_error "translate --max-length $bad" "--max-length: must be a whole number (from 1 to 1024|in decimal digits), got '$bad'" \
    "$QKV" translate --checkpoint "$work/rotary/model.safetensors" --max-length "$bad" "money bank grows"
done
expect_error "eval --max-length past an absolute layout" "--max-length 7 is past this model's layout: its absolute positions write at most 6 Hindi words" \
  "$QKV" eval --checkpoint "$two" --data "$gen" --split deeper --max-length 7
expect_error "attend --max-length past an absolute layout" "--max-length 9 is past this model's layout" \
  "$QKV" attend --checkpoint "$two" --format text --max-length 9 "money bank grows"
"$QKV" attend --checkpoint "$work/rotary/model.safetensors" --knockout target:0 --format json "money bank grows" >"$work/out" 2>"$work/err" &&
  python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); sys.exit(0 if "knocked_translation" in j and len(j["weights"]) > 0 else 1)' "$work/out" &&
  pass || fail "attend --knockout --format json on a rotary model (its traced pass holds the translation alone): $(cat "$work/err")"
expect_error "translate: an absolute model refuses past its layout" "the sentence has 15 words; this model reads at most 7 \(its absolute positions cannot read past them" \
  "$QKV" translate --checkpoint "$two" "$longer"
"$QKV" attend --checkpoint "$work/rotary/model.safetensors" --format text "$longer" >"$work/out" 2>&1 &&
  grep -q "fast" "$work/out" && pass || fail "attend: a rotary model draws a sentence past its layout: $(head -n 3 "$work/out")"
grep -qF '\"positions\":\"rotary\"' "$work/rotary/model.safetensors" && ! grep -qF '\"positions\"' "$two" && pass ||
  fail "the config names rotary positions, and absolute ones only by their absence"
# the layout is a setting: more positions than train needs, never fewer
if "$QKV" train "${small[@]}" --max-source 9 --max-target 12 --out "$work/wide" >/dev/null 2>&1 &&
   grep -qF '\"max_source\":9,\"max_target\":12' "$work/wide/model.safetensors"; then
  pass
else
  fail "train --max-source 9 --max-target 12 lays out 9 and 12 positions"
fi
expect_error "--max-source shorter than train" "--max-source 3 is shorter than the longest train sentence \(7 words\): give at least 7, or 0 for train's longest" \
  "$QKV" train "${small[@]}" --max-source 3 --out "$work/o6"
expect_absent "--max-source shorter than train" "$work/o6"
expect_error "--max-target shorter than train" "--max-target 2 is shorter than the longest train translation" \
  "$QKV" train "${small[@]}" --max-target 2 --out "$work/o6"
expect_error "--label-smoothing 2" "--label-smoothing: must be from 0 to 1, got 2 \(see" \
  "$QKV" train "${small[@]}" --label-smoothing 2 --out "$work/o6"
expect_error "--positions sideways" "--positions: sideways not in \{absolute,rotary,absolute\+rotary,alibi\}" \
  "$QKV" train "${small[@]}" --positions sideways --out "$work/o6"
# a valid split whose every sentence is past an absolute layout would report a loss of 0: refused first
mkdir -p "$work/longvalid"
printf 'river bank\tनदी किनारा\nmoney bank\tपैसा बैंक\n' >"$work/longvalid/train.tsv"
printf 'river bank river bank\tनदी किनारा\n' >"$work/longvalid/valid.tsv"
cp "$work/longvalid/train.tsv" "$work/longvalid/test.tsv"
expect_error "train: every valid sentence past the layout" "valid.tsv: every one of its 1 sentences is longer than the model's 2 source and 3 target positions, so validation would measure nothing; give a wider --max-source/--max-target, or --positions rotary or alibi" \
  "$QKV" train --epochs 1 --d-model 8 --d-k 4 --d-ff 16 --positions absolute --data "$work/longvalid" --out "$work/o8"
expect_absent "train: refused before any file" "$work/o8"
expect_error "--random-positions with alibi" "random_positions 64 samples rotary positions, and alibi positions have no rotary part" \
  "$QKV" train --epochs 1 --d-model 8 --d-k 4 --d-ff 16 --data "$gen" --positions alibi --random-positions 64 --out "$work/o7"
expect_error "--random-positions below the layout" "random_positions must be 0 or from the layout's [0-9]+ positions to 4096, got 3" \
  "$QKV" train --epochs 1 --d-model 8 --d-k 4 --d-ff 16 --data "$gen" --positions rotary --random-positions 3 --out "$work/o7"
expect_error "--random-positions past its bound" "--random-positions: must be a whole number from -1 to 4096, got '5000'" \
  "$QKV" train --epochs 1 --data "$gen" --positions rotary --random-positions 5000 --out "$work/o7"
expect_absent "--random-positions refused: no run folder" "$work/o7/model.safetensors"
expect_error "--rotary-base below its bound" "--rotary-base: must be from 2 to 1000000000, got 1 " \
  "$QKV" train --epochs 1 --data "$gen" --rotary-base 1 --out "$work/o7"
expect_error "--rotary-base without rotary positions" "rotary_base 100 turns rotary positions, and alibi positions have no rotary part" \
  "$QKV" train --epochs 1 --d-model 8 --d-k 4 --d-ff 16 --data "$gen" --positions alibi --rotary-base 100 --out "$work/o7"
expect_error "--rotary-base not a number" "--rotary-base: must be a finite number, got 'ten'" \
  "$QKV" train --epochs 1 --data "$gen" --rotary-base ten --out "$work/o7"
expect_error "--length-scale past its bound" "--length-scale: must be from 0 to 8, got 9 " \
  "$QKV" train --epochs 1 --data "$gen" --length-scale 9 --out "$work/o7"
expect_error "--length-scale without rotary positions" "length_scale 1 scales rotary positions, and alibi positions have no rotary part" \
  "$QKV" train --epochs 1 --d-model 8 --d-k 4 --d-ff 16 --data "$gen" --positions alibi --length-scale 1 --out "$work/o7"
expect_absent "--length-scale refused: no run folder" "$work/o7/model.safetensors"
expect_error "--positions rotary with an odd head width" "head width must be even, got 3 \(--d-k\)" \
  "$QKV" train --epochs 1 --d-model 8 --d-k 3 --d-ff 16 --data "$gen" --positions rotary --out "$work/o6"
expect_absent "bad --positions" "$work/o6"
printf 'money bank grows\tपैसा\nno tab\n' >"$gen/deeper.tsv"
expect_error "malformed generalisation split" "deeper.tsv:2: missing tab" "$QKV" train "${small[@]}" --out "$work/o9"
expect_absent "malformed generalisation split" "$work/o9"

# ---- the length test: trained on 1-4 English words, translating 6-9 of the same pattern ----
# (the Hindi is the colour of the last English word, always one word before <sep>). A relative model
# reads the longer sentences and ALiBi, whose bias keeps decaying past the distances train showed,
# gets most of them (75% on the development VM; chance is 1/6); rotary (with its randomized
# positions, the default) reads them too; an absolute model cannot read them at all.
lt="$work/lt"
mkdir -p "$lt"
python3 - "$lt" <<'PY'
import random, sys
rng = random.Random(7)
colours = {"red": "लाल", "blue": "नीला", "green": "हरा", "black": "काला", "white": "सफ़ेद", "pink": "गुलाबी"}
def split(name, n, lo, hi):
    with open(f"{sys.argv[1]}/{name}.tsv", "w", encoding="utf-8") as f:
        for _ in range(n):
            words = [rng.choice(list(colours)) for _ in range(rng.randint(lo, hi))]
            f.write(" ".join(words) + "\t" + colours[words[-1]] + "\n")
split("train", 600, 1, 4); split("valid", 100, 1, 4); split("test", 100, 1, 4); split("longer", 100, 6, 9)
PY
length_model=(--data "$lt" --epochs 60 --lr 1e-2 --d-model 16 --d-k 8 --d-ff 32 --layers 2 --threads 1)
"$QKV" train "${length_model[@]}" --positions alibi --out "$lt/alibi" >/dev/null 2>&1 &&
  "$QKV" eval --checkpoint "$lt/alibi/model.safetensors" --data "$lt" --split longer --format json >"$work/out" 2>&1
if python3 -c 'import json,sys; r = json.load(open(sys.argv[1]))["splits"][0]; sys.exit(0 if r["sentences"] == 100 and r["exact_match"] >= 0.5 else 1)' "$work/out"; then
  pass
else
  fail "the length test: an alibi model trained on 1-4 words translates 6-9 of the same pattern (>= 50%): $(cat "$work/out")"
fi
"$QKV" train "${length_model[@]}" --positions rotary --out "$lt/rotary" >/dev/null 2>&1 &&
  "$QKV" eval --checkpoint "$lt/rotary/model.safetensors" --data "$lt" --split longer >"$work/out" 2>"$work/err"
if grep -qE '^longer +100 ' "$work/out" && [ ! -s "$work/err" ]; then pass; else fail "the length test: a rotary model reads the 6-9 word sentences: $(cat "$work/out" "$work/err")"; fi

# ---- reproducibility: same seed, same flags, bit-identical checkpoint ----
# (on the small data dir, which nothing else changes while the tests run)
rm -f "$gen/deeper.tsv"
"$QKV" train --layers 2 "${small[@]}" --positions absolute --out "$work/two_again" >/dev/null 2>&1
cmp -s "$two" "$work/two_again/model.safetensors" && pass || fail "same seed gives a bit-identical checkpoint"

# ---- the same checkpoint on 1 and 3 threads (batches large enough to split every loop and gemm) ----
mkdir -p "$work/threads_data"
head -n 640 data/idioms/train.tsv >"$work/threads_data/train.tsv"
head -n 64 data/idioms/valid.tsv >"$work/threads_data/valid.tsv"
head -n 64 data/idioms/test.tsv >"$work/threads_data/test.tsv"
for n in 1 3; do
  "$QKV" train --data "$work/threads_data" --layers 2 --epochs 1 --threads $n --out "$work/threads_$n" >/dev/null 2>&1
done
cmp -s "$work/threads_1/model.safetensors" "$work/threads_3/model.safetensors" && pass ||
  fail "--threads 1 and --threads 3 give a bit-identical checkpoint"

# ---- floating-point flags reject nan and inf; seeds are whole numbers in [0, 2^64 - 1], never wrapped ----
for flag in "--lr nan" "--lr inf" "--dropout nan" "--weight-decay inf"; do
  expect_error "train $flag" "${flag%% *}: must be a finite number, got '${flag#* }'" "$QKV" train $flag "${small[@]}" --out "$work/o6"
done
for seed in -1 18446744073709551616 1e23 0x10; do
  expect_error "train --seed $seed" "--seed: must be a whole number from 0 to 18446744073709551615, got '$seed'" \
    "$QKV" train --seed "$seed" "${small[@]}" --out "$work/o6"
done
expect_error "demo --seed -1" "--seed: must be a whole number" "$QKV" demo --seed -1 --data "$gen" --out "$work/o6"
expect_absent "rejected flags" "$work/o6"
"$QKV" train --seed 18446744073709551615 "${small[@]}" --out "$work/maxseed" >/dev/null 2>&1 &&
  [ -f "$work/maxseed/model.safetensors" ] && pass || fail "train --seed 18446744073709551615 (the largest seed) is accepted"

# ---- demo (on the small data dir): the tutorial's setting (learned, static, none; 1 block, frozen
# embeddings), then the default model (learned, static), the recorded grid, and the page ----
if "$QKV" demo --data "$gen" --epochs 1 --layers 2 --out "$work/demo" >"$work/out" 2>"$work/err"; then
  grep -q "sense_context" "$work/out" && grep -q "sense_context" "$work/demo/index.html" && pass ||
    fail "demo: no per-split column: $(head -n 20 "$work/out")"
  [ "$(grep -c '^\(learned\|static\|none\) \+1 frozen' "$work/out")" -eq 3 ] &&
    [ "$(grep -c '^\(learned\|static\) \+2 trained' "$work/out")" -eq 2 ] && pass ||
    fail "demo: expected three 1-block frozen rows and two 2-block trained rows: $(head -n 30 "$work/out")"
  # the tutorial's setting's models say that their embeddings were frozen, and the page labels them so
  grep -q '"frozen_embeddings":true' "$work/demo/explore.html" && grep -q 'frozen" : "trained"} embeddings' "$work/demo/explore.html" &&
    grep -aq 'frozen_embeddings' "$work/demo/tutorial_learned/model.safetensors" && ! grep -aq 'frozen_embeddings' "$work/demo/learned/model.safetensors" && pass ||
    fail "demo: the frozen-embedding models are not labelled so"
  [ "$(grep -o '"attention":"\(learned\|static\|none\)"' "$work/demo/explore.html" | sort -u | wc -l)" -eq 3 ] &&
    grep -q 'href="explore.html"' "$work/demo/index.html" && pass ||
    fail "demo: explore.html embeds the three modes and index.html links to it"
  # the recorded grid is drawn, with the command that made it, and this run's cells sit beside it
  # every picture's alt text is its whole caption, quotes and all (a sentence in "..." once cut it short)
  python3 - "$work/demo/index.html" <<'PY' && pass || fail "demo: index.html's alt texts are not the captions (above)"
import html.parser, sys
class Figures(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(); self.alts, self.captions, self.in_caption = [], [], False
    def handle_starttag(self, tag, attrs):
        if tag == "img": self.alts.append(dict(attrs).get("alt", ""))
        if tag == "figcaption": self.in_caption = True; self.captions.append("")
    def handle_endtag(self, tag):
        if tag == "figcaption": self.in_caption = False
    def handle_data(self, data):
        if self.in_caption: self.captions[-1] += data
f = Figures(); f.feed(open(sys.argv[1], encoding="utf-8").read())
figure_alts = f.alts[-len(f.captions):]
quoted = [c for c in f.captions if '"' in c]
assert f.captions and quoted and figure_alts == f.captions and all(f.alts), (f.alts, f.captions)
PY
  # each figure's picture is a link to itself, so that a phone opens it full size
  [ "$(grep -c '<figure><a href="\([^"]*\)"><img src="\1"' "$work/demo/index.html")" -ge 10 ] && pass ||
    fail "demo: the figures' pictures do not link to themselves"
  [ -s "$work/demo/ablation.png" ] && grep -q "qkv ablate --data data/idioms --blocks 1,2,3,4,5" "$work/demo/index.html" &&
    grep -q "learned, 1 block, frozen embeddings .* 3.1%" "$work/out" && pass ||
    fail "demo: the ablation grid section: $(grep -A12 'ablation grid' "$work/out")"
  # the README shows tools/demo/ablation.png: it must be what the demo draws from the recorded grid
  cmp -s "$work/demo/ablation.png" tools/demo/ablation.png && pass ||
    fail "demo: tools/demo/ablation.png is not what qkv demo draws from tools/demo/ablation_grid.tsv (copy DIR/ablation.png over it)"
  # no cues.tsv in this data directory: the cue and probe sections say so instead of failing
  grep -q "cue attention: skipped" "$work/out" && grep -q "sense probe: skipped" "$work/out" && pass ||
    fail "demo: the cue and probe sections without cues.tsv"
else
  fail "demo: $(cat "$work/err")"
fi
# ---- demo with more than one thread: the models train at once, each in a child process at one
# thread; the same bytes as one after another in one process (--threads 1). Both runs write to the
# same --out (the pictures name their checkpoints), the first moved aside; a test split of training
# sentences gives scores other than 0. ----
mkdir -p "$work/demo_data" && cp "$gen"/*.tsv "$work/demo_data/" && cp "$gen/train.tsv" "$work/demo_data/test.tsv"
# The text minus its timings: the "Ns," of each training line and the last column of the tables.
untimed() { sed -E -e 's/\.\.\. [0-9.]+s, /... /' -e '/^(learned|static|none) +[0-9]+ (frozen|trained) /s/ +[0-9.]+$//' "$1"; }
demo_small=(demo --data "$work/demo_data" --epochs 30 --layers 2 --out "$work/demo_same")
if "$QKV" "${demo_small[@]}" --threads 1 >"$work/out_t1" 2>"$work/err" && mv "$work/demo_same" "$work/demo_t1" &&
  "$QKV" "${demo_small[@]}" --threads 2 >"$work/out_t2" 2>>"$work/err"; then
  diff <(untimed "$work/out_t1") <(untimed "$work/out_t2") >"$work/diff" && pass ||
    fail "demo --threads 2 prints what --threads 1 does (timings aside): $(head -n 20 "$work/diff")"
  grep -q '^training none, 1 block, frozen embeddings .*test [1-9][0-9.]*%, generalisation mean' "$work/out_t2" &&
    grep -q '^learned  *2 trained  *[1-9][0-9.]*%' "$work/out_t2" && pass ||
    fail "demo --threads 2 prints a line per model and the tables, with scores other than 0: $(head -n 20 "$work/out_t2")"
  same=1
  for f in tutorial_learned/model.safetensors tutorial_static/model.safetensors tutorial_none/model.safetensors \
    learned/model.safetensors static/model.safetensors reverse/model.safetensors learned/channel.safetensors \
    right_to_left/model.safetensors learned/right_to_left.safetensors reverse_right_to_left/model.safetensors \
    learned/channel_right_to_left.safetensors explore.html $(cd "$work/demo_t1" && ls *.png); do
    cmp -s "$work/demo_t1/$f" "$work/demo_same/$f" || { same=0; echo "differs: $f"; }
  done
  [ "$same" -eq 1 ] && pass || fail "demo --threads 2 and --threads 1 give bit-identical checkpoints, pictures and explorer"
else
  fail "demo --threads 1 and 2: $(cat "$work/err")"
fi
# A model that cannot be trained (its folder is a file) stops the demo at once with one line, the
# other training processes killed and reaped, and no page written (the other model would train for
# a minute: 2000 epochs).
mkdir -p "$work/demo_fail" && : >"$work/demo_fail/tutorial_static"
expect_error "demo: a failing training process" \
  "^qkv: error: training static, 1 block, frozen embeddings: --out .*tutorial_static is not a directory" \
  timeout 30 "$QKV" demo --data "$gen" --epochs 2000 --threads 2 --out "$work/demo_fail"
pgrep -f -- "--out $work/demo_fail" >/dev/null && fail "demo: a training process outlived the failed demo" || pass
expect_absent "demo: no page after a failed training process" "$work/demo_fail/index.html"
# SIGINT to the demo alone, then to its whole process group (Ctrl-C): exit 130 at once, nothing left running.
for target in parent group; do
  out="$work/demo_int_$target"
  setsid "$QKV" demo --data "$gen" --epochs 2000 --threads 2 --out "$out" >"$work/out" 2>"$work/err" &
  pid=$!
  for _ in $(seq 100); do [ -n "$(pgrep -P "$pid")" ] && break; sleep 0.1; done
  [ "$target" = parent ] && kill -INT "$pid" || kill -INT -- "-$pid"
  for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    fail "demo: still running 10 s after SIGINT to the $target"
    kill -KILL -- "-$pid"
  fi
  wait "$pid"
  rc=$?
  [ "$rc" -eq 130 ] && [ "$(wc -l <"$work/err")" -eq 1 ] && grep -q "interrupted (SIGINT)" "$work/err" && pass ||
    fail "demo: SIGINT to the $target: exit $rc (expected 130), stderr: $(cat "$work/err")"
  pgrep -f -- "--out $out" >/dev/null && fail "demo: a training process outlived SIGINT to the $target" || pass
  expect_absent "demo: no page after SIGINT to the $target" "$out/index.html"
done
printf 'cell\tattention\ttoken_embeddings\tblocks\tgeneralisation_mean\nx\tlearned\ttrained\tone\t5\n' >"$work/bad_grid.tsv"
expect_error "demo --grid with a bad line" "bad_grid.tsv:2: blocks 'one'" "$QKV" demo --data "$gen" --grid "$work/bad_grid.tsv" --out "$work/o7"
expect_absent "demo --grid refused before training" "$work/o7"
expect_error "demo --grid missing" "--grid $work/no_grid.tsv: cannot open file" "$QKV" demo --data "$gen" --grid "$work/no_grid.tsv" --out "$work/o8"
touch "$work/a_file"
expect_error "demo --out that cannot be a folder" "--out $work/a_file/demo: cannot create that folder \\(Not a directory\\)" \
  "$QKV" demo --data "$gen" --out "$work/a_file/demo"

# ---- ablate: the grid, cached per cell, a TSV/JSON table and a plot ----
ablate=(ablate --data "$gen" --layers 2,1 --epochs 1 --d-model 8 --d-k 4 --d-ff 16 --out "$work/ablate")
if "$QKV" "${ablate[@]}" >"$work/out" 2>"$work/err"; then
  # 2 block counts x (3 modes x trained/frozen + the equal-parameter control) = 14 cells, one row each
  [ "$(tail -n +2 "$work/ablate/ablation.tsv" | wc -l)" -eq 14 ] && [ -s "$work/ablate/ablation.png" ] &&
    /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert len(d["cells"]) == 14 and d["command"].startswith("qkv ablate")' \
      "$work/ablate/ablation.json" && pass || fail "ablate: expected 14 rows, a plot and the JSON: $(cat "$work/out" "$work/err" | tail -n 20)"
  # the control has learned attention's parameter count (within 2%), static's has fewer
  awk -F'\t' '$1 == "learned-trained-L2" { l = $6 } $1 == "static_wide-trained-L2" { w = $6 } $1 == "static-trained-L2" { s = $6 }
    END { exit !(l > s && w > 0.98 * l && w < 1.02 * l) }' "$work/ablate/ablation.tsv" && pass ||
    fail "ablate: the equal-parameter control does not match learned's parameter count: $(cut -f1,6 "$work/ablate/ablation.tsv")"
  "$QKV" "${ablate[@]}" --rerun learned-frozen-L1 >"$work/out" 2>&1
  [ "$(grep -c 'cached:' "$work/out")" -eq 13 ] && grep -q 'learned-frozen-L1 .*training' "$work/out" && pass ||
    fail "ablate rerun: 13 cells from the cache and learned-frozen-L1 trained again: $(head -n 16 "$work/out")"
  # a cell's cache key is its whole recipe, defaults included, and a cached cell made with another
  # (here another dropout, which no ablate flag sets: a changed default) is trained again
  python3 -c 'import json, sys; p = sys.argv[1]; j = json.load(open(p))
assert {"dropout", "lr", "weight_decay", "positions", "random_positions", "batch", "label_smoothing"} <= set(j["settings"]), j
j["settings"]["dropout"] = "0x1p-1"; json.dump(j, open(p, "w"))' "$work/ablate/cells/static-trained-L2/result.json" ||
    fail "ablate: a cell's cached settings lack the recipe"
  "$QKV" "${ablate[@]}" >"$work/out" 2>&1
  [ "$(grep -c 'cached:' "$work/out")" -eq 13 ] && grep -q 'static-trained-L2 .*training' "$work/out" && pass ||
    fail "ablate: a cell cached with another dropout is trained again: $(head -n 16 "$work/out")"
  "$QKV" ablate --data "$gen" --blocks 1,2 --epochs 2 --d-model 8 --d-k 4 --d-ff 16 --out "$work/ablate" \
    --no-frozen --no-control --modes learned >"$work/out" 2>&1
  [ "$(grep -c 'training' "$work/out")" -eq 2 ] && [ "$(tail -n +2 "$work/ablate/ablation.tsv" | wc -l)" -eq 2 ] && pass ||
    fail "ablate: a cell made with other settings is trained again, not reused: $(head -n 5 "$work/out")"
else
  fail "ablate: $(cat "$work/err")"
fi
expect_error "ablate --rerun of an unknown cell" "--rerun: no cell 'learned-L9' in this grid" \
  "$QKV" "${ablate[@]}" --rerun learned-L9
expect_error "ablate --layers 0" "--layers" "$QKV" ablate --layers 0 --data "$gen" --out "$work/o8"
expect_absent "ablate --layers 0" "$work/o8"

# ---- non-finite numbers and untrusted files (issue 11) ----
expect_error "a learning rate that blows up" "training stopped: the (valid )?loss was nan .*no checkpoint was written" \
  "$QKV" train "${small[@]}" --lr 1e30 --out "$work/o6"
expect_absent "a run stopped by NaN before its first checkpoint" "$work/o6"
mkdir -p "$work/long"
cp "$gen"/valid.tsv "$gen"/test.tsv "$work/long/"
{ cat "$gen/train.tsv"; printf '%s\tपैसा\n' "$(printf 'bank %.0s' $(seq 300))"; } >"$work/long/train.tsv"
expect_error "a 300-word dataset line" "train.tsv:6: english side has 300 words; qkv reads sentences of at most 256" \
  "$QKV" train --data "$work/long" --out "$work/o7"
expect_absent "a 300-word dataset line" "$work/o7"
mkdir -p "$work/fifo"
cp "$gen"/valid.tsv "$gen"/test.tsv "$work/fifo/"
mkfifo "$work/fifo/train.tsv"
expect_error "a FIFO as train.tsv" "train.tsv: not a regular file" timeout 20 "$QKV" train --data "$work/fifo" --out "$work/o8"
expect_error "a FIFO as the checkpoint" "not a regular file" timeout 20 "$QKV" eval --checkpoint "$work/fifo/train.tsv"
expect_error "/dev/zero as the checkpoint" "/dev/zero: not a regular file" "$QKV" translate --checkpoint /dev/zero "river bank"

# integer flags take decimal digits only (no exponent, fraction, hex or spaces)
expect_error "--epochs 1e3" "--epochs: must be a whole number in decimal digits, got '1e3'" "$QKV" train --epochs 1e3 --out "$work/o9"
expect_error "--d-model 0x10" "--d-model: must be a whole number in decimal digits, got '0x10'" "$QKV" train --d-model 0x10 --out "$work/o9"
expect_error "bench --steps 2.5" "--steps: must be a whole number in decimal digits, got '2.5'" "$QKV" bench --steps 2.5
expect_absent "rejected integer flags" "$work/o9"

# ---- batch translation and machine-readable output (issue 13) ----
printf 'the exam was a piece of cake\nriver bank flows\n' | "$QKV" translate --checkpoint "$ckpt" >"$work/out" 2>"$work/err"
if [ $? -eq 0 ] && [ "$(wc -l <"$work/out")" -eq 2 ] && [ "$(cut -f1 "$work/out" | tr '\n' '|')" = "the exam was a piece of cake|river bank flows|" ] &&
   [ "$(awk -F'\t' 'NF == 2 && $2 != ""' "$work/out" | wc -l)" -eq 2 ]; then
  pass
else
  fail "translate from stdin: two english<TAB>hindi lines: $(cat "$work/out" "$work/err")"
fi
{ printf 'river bank flows\n'; printf 'bank %.0s' $(seq 300); printf '\n\xff\xfe bank\nmoney bank grows\n'; } >"$work/lines.txt"
"$QKV" translate --checkpoint "$ckpt" --input "$work/lines.txt" >"$work/out" 2>"$work/err"
rc=$?
if [ $rc -ne 0 ] && [ "$(wc -l <"$work/out")" -eq 2 ] && grep -q "lines.txt:2: skipped: 300 words; this model reads at most 256" "$work/err" &&
   grep -q "lines.txt:3: skipped: not valid UTF-8" "$work/err"; then
  pass
else
  fail "translate --input: bad lines named and skipped, the rest translated, non-zero exit: rc $rc $(cat "$work/out" "$work/err")"
fi
expect_error "translate: a sentence and --input" "either a sentence or --input" \
  "$QKV" translate --checkpoint "$ckpt" --input "$work/lines.txt" "river bank"
"$QKV" eval --checkpoint "$ckpt" --split test --format json >"$work/out" 2>"$work/err"
if python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); s = r["splits"][0]; assert s["split"] == "test" and 0 <= s["exact_match"] <= 1 and s["sentences"] > 0' "$work/out"; then
  pass
else
  fail "eval --format json: $(head -c 400 "$work/out")"
fi
"$QKV" --version >"$work/out" 2>&1 && grep -qE '^qkv [0-9]+\.[0-9]+' "$work/out" && grep -q "CUDA" "$work/out" && pass ||
  fail "--version: $(cat "$work/out")"

# ---- resumable runs (issue 11): interrupted and resumed = uninterrupted, byte for byte ----
run=(--batch 2 --layers 2 --d-model 8 --d-k 4 --d-ff 16 --data "$gen")  # 3 steps per epoch
"$QKV" train "${run[@]}" --epochs 3 --out "$work/whole" >"$work/out" 2>&1 || fail "uninterrupted run: $(cat "$work/out")"
[ ! -e "$work/whole/train_state.safetensors" ] && pass || fail "a finished run left its training state behind"
# steps.csv: the header and every logged step (9 steps: every one), with the schedule's learning rate
[ "$(head -n 1 "$work/whole/steps.csv")" = "step,epoch,train_loss,learning_rate" ] &&
  [ "$(tail -n +2 "$work/whole/steps.csv" | cut -d, -f1 | tr '\n' ' ')" = "1 2 3 4 5 6 7 8 9 " ] &&
  [ "$(sed -n 10p "$work/whole/steps.csv" | cut -d, -f2)" = 3 ] && pass ||
  fail "steps.csv logs steps 1 to 9 with their epoch: $(cat "$work/whole/steps.csv")"
# interrupted after step K and resumed = the uninterrupted run WHOLE, byte for byte
# usage: resumes_like WHOLE NAME K [train options...]
resumes_like() {
  local whole=$1 name=$2 k=$3 tag=${2//[^a-z0-9]/}
  local part="$work/part_${tag}_$k"
  shift 3
  "$QKV" train "${run[@]}" --epochs 3 "$@" --stop-after-steps "$k" --out "$part" >"$work/out" 2>"$work/err"
  local rc=$?
  if [ "$rc" -ne 130 ] || [ ! -f "$part/train_state.safetensors" ] || ! grep -q "the run is saved" "$work/err"; then
    fail "$name: interrupt after step $k: rc $rc, $(cat "$work/err")"
  elif "$QKV" train --resume --out "$part" >"$work/out" 2>"$work/err" &&
       cmp -s "$whole/model.safetensors" "$part/model.safetensors" && cmp -s "$whole/steps.csv" "$part/steps.csv"; then
    pass
  else
    fail "$name: interrupted after step $k and resumed: the checkpoint or steps.csv differs from the uninterrupted run's: $(cat "$work/err")"
  fi
}
for k in 1 4 6 8; do  # mid-epoch 1, mid-epoch 2, the end of epoch 2, mid-epoch 3
  resumes_like "$work/whole" "plain run" "$k"
done
# --ema: the averaged weights are the checkpoint, and the state carries them, so a run interrupted
# mid-epoch or at an epoch's end resumes byte for byte; without --ema the checkpoint differs
"$QKV" train "${run[@]}" --epochs 3 --ema 0.5 --out "$work/ema_whole" >"$work/out" 2>&1 || fail "--ema 0.5 run: $(cat "$work/out")"
! cmp -s "$work/whole/model.safetensors" "$work/ema_whole/model.safetensors" && pass ||
  fail "--ema 0.5 writes the same checkpoint as the trained weights"
for k in 4 6; do
  resumes_like "$work/ema_whole" "--ema 0.5" "$k" --ema 0.5
done
expect_error "--ema 1" "--ema: must be from 0 to 0.9999, got 1 \(see" \
  "$QKV" train "${run[@]}" --ema 1 --out "$work/ema_bad"
expect_absent "--ema 1" "$work/ema_bad"
# --target-noise: hidden Hindi inputs change the run; their draws are keyed by seed, step and pair,
# so a run interrupted mid-epoch resumes byte for byte
"$QKV" train "${run[@]}" --epochs 3 --target-noise 0.5 --out "$work/noise_whole" >"$work/out" 2>&1 ||
  fail "--target-noise 0.5 run: $(cat "$work/out")"
! cmp -s "$work/whole/model.safetensors" "$work/noise_whole/model.safetensors" && pass ||
  fail "--target-noise 0.5 writes the same checkpoint as a run without it"
resumes_like "$work/noise_whole" "--target-noise 0.5" 4 --target-noise 0.5
expect_error "--target-noise 1" "--target-noise: must be from 0 to 0.9, got 1 \(see" \
  "$QKV" train "${run[@]}" --target-noise 1 --out "$work/noise_bad"
expect_absent "--target-noise 1" "$work/noise_bad"
expect_error "a rerun into a finished run" "already holds a run \(model.safetensors\), finished; use --force to start over" \
  "$QKV" train "${run[@]}" --epochs 3 --out "$work/whole"
[ -f "$work/whole/model.safetensors" ] && pass || fail "a refused rerun removed the earlier model"
if "$QKV" train --resume --out "$work/whole" >"$work/out" 2>&1 && grep -q "the run is complete" "$work/out"; then
  pass
else
  fail "--resume of a finished run: says it is complete and succeeds: $(cat "$work/out")"
fi
mkdir -p "$work/empty"
expect_error "--resume of a folder without a run" "holds no saved run to resume .*: start it again with the command that started it" \
  "$QKV" train --resume --out "$work/empty"
mkdir -p "$work/modelonly"
cp "$work/whole/model.safetensors" "$work/modelonly/"
expect_error "--resume of a model without its state" "no training state to resume: .* start it over with the command that started it and --force" \
  "$QKV" train --resume --out "$work/modelonly"
expect_error "a rerun into a model without its state" "already holds a run \(model.safetensors\) without a training state to resume; use --force" \
  "$QKV" train "${run[@]}" --out "$work/modelonly"
"$QKV" train "${run[@]}" --epochs 3 --stop-after-steps 2 --out "$work/flags" >/dev/null 2>&1
expect_error "a rerun into an interrupted run" "already holds a run \(train_state.safetensors\); continue it with qkv train --resume --out" \
  "$QKV" train "${run[@]}" --epochs 3 --out "$work/flags"
expect_error "--resume with a setting" "--resume takes every setting from the saved run; drop --lr" \
  "$QKV" train --resume --lr 0.1 --out "$work/flags"
expect_error "--resume with --clip" "--resume takes every setting from the saved run; drop --clip" \
  "$QKV" train --resume --clip 2 --out "$work/flags"
# a crafted training state cannot size a model beyond the command line's bounds
cp -r "$work/flags" "$work/crafted"
python3 tests/cli/safetensors_edit.py "$work/crafted/train_state.safetensors" option d_model 1048576
expect_error "--resume of a crafted state" "training state: d_model 1048576 is outside \[1, 4096\]" \
  "$QKV" train --resume --out "$work/crafted"
touch "$work/whole/model.safetensors.tmp.424242" "$work/whole/metrics.csv.tmp"
if "$QKV" train "${run[@]}" --epochs 1 --force --out "$work/whole" >"$work/out" 2>&1 &&
   [ ! -e "$work/whole/model.safetensors.tmp.424242" ] && [ ! -e "$work/whole/metrics.csv.tmp" ] &&
   [ "$(wc -l <"$work/whole/metrics.csv")" -eq 2 ]; then
  pass
else
  fail "--force: starts over and removes stale temp files: $(cat "$work/out"; ls "$work/whole")"
fi
"$QKV" train "${run[@]}" --epochs 100000 --out "$work/sig" >"$work/out" 2>"$work/err" &
pid=$!
sleep 3
kill -INT "$pid"
wait "$pid"
rc=$?
if [ "$rc" -eq 130 ] && [ -f "$work/sig/train_state.safetensors" ] && grep -q "interrupted (SIGINT)" "$work/err"; then
  pass
else
  fail "SIGINT: exit 130 with the state saved; got rc $rc: $(cat "$work/err")"
fi

# ---- qkv bench --format json: every measurement with its unit ----
if "$QKV" bench --size toy --steps 1 --format json >"$work/bench.json" 2>"$work/err" &&
   python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
names = {m["name"] for m in d["measurements"]}
assert d["version"].startswith("qkv ") and "BLAS" in d["build"], d
assert {"training_step", "training_throughput", "training_gemm_floor"} <= names, names
assert all(isinstance(m["value"], (int, float)) and m["value"] > 0 and m["unit"] for m in d["measurements"])
assert any(m["name"] == "training_step" and m["unit"] == "ms" and m["size"] == "toy" for m in d["measurements"])
' "$work/bench.json" && "$QKV" bench --attention-length 32 --attention-width 16 --format json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert {(m["name"], m.get("path")) for m in d["measurements"]} >= {("attention_forward", "fused"), ("attention_forward", "composed")}
assert all(m["H"] == 16 for m in d["measurements"] if m["name"].startswith("attention_")), d
share = [m["value"] for m in d["measurements"] if m["name"] == "attention_fused_share_of_sgemm"]
assert len(share) == 1 and 0 < share[0], d
'; then
  pass
else
  fail "bench --format json: parses, with named measurements and units: $(head -c 300 "$work/bench.json") $(cat "$work/err")"
fi
# ---- qkv bench --positions: each scheme's step beside absolute's, as a ratio ----
if "$QKV" bench --size toy --steps 1 --positions rotary alibi --format json 2>"$work/err" | python3 -c '
import json, sys
d = json.load(sys.stdin)
ratios = {m["positions"]: m["value"] for m in d["measurements"] if m["name"] == "positions_step_ratio"}
assert set(ratios) == {"rotary", "alibi"} and all(0 < r < 100 for r in ratios.values()), d
assert all(m["unit"] == "ratio" and m["size"] == "toy" for m in d["measurements"]), d
'; then pass; else fail "bench --positions rotary alibi: a ratio per scheme: $(cat "$work/err")"; fi
expect_error "bench --positions sinusoidal" "--positions: sinusoidal not in" "$QKV" bench --positions sinusoidal
expect_error "bench --positions with --attention-length" "excludes --positions" \
  "$QKV" bench --positions rotary --attention-length 32
expect_error "bench --attention-length with --data-parallel" "excludes --data-parallel" \
  "$QKV" bench --data-parallel --attention-length 32
expect_error "bench --format yaml" "--format" "$QKV" bench --format yaml
expect_error "bench --attention-width 0" "--attention-width" "$QKV" bench --attention-length 32 --attention-width 0

# ---- qkv explore: the offline page (its forward pass is checked in a browser by tests/browser/) ----
"$QKV" explore --checkpoint "$ckpt" --compare "$two" --sentence "ravi saw a bat" --out "$work/page.html" >"$work/out" 2>&1
if grep -q "wrote $work/page.html" "$work/out" && grep -q '"sentences":\["ravi saw a bat"\]' "$work/page.html" &&
   [ "$(grep -o '"float32_base64"' "$work/page.html" | wc -l)" -gt 10 ] && ! grep -q '"QKV_EXPLORER_DATA"' "$work/page.html" &&
   ! grep -q 'src="http\|href="http' "$work/page.html"; then
  pass
else
  fail "explore: writes one offline page with both models and the sentence: $(cat "$work/out")"
fi
# --weights float16: every tensor as half floats (2 bytes a weight, not 4), and nothing else changes
"$QKV" explore --checkpoint "$ckpt" --compare "$two" --sentence "ravi saw a bat" --weights float16 --out "$work/page16.html" \
  >"$work/out" 2>&1
if grep -q "with float16 weights" "$work/out" && ! grep -q '"float32_base64"' "$work/page16.html" &&
   [ "$(grep -o '"float16_base64"' "$work/page16.html" | wc -l)" -eq "$(grep -o '"float32_base64"' "$work/page.html" | wc -l)" ] &&
   [ "$(wc -c <"$work/page16.html")" -lt "$(wc -c <"$work/page.html")" ]; then
  pass
else
  fail "explore --weights float16: the same tensors as half floats, a smaller page: $(cat "$work/out")"
fi
expect_error "explore --weights float64" "--weights" "$QKV" explore --checkpoint "$ckpt" --weights float64 --out "$work/p0.html"
expect_error "explore: a missing checkpoint" "nope.safetensors" "$QKV" explore --checkpoint "$work/nope.safetensors" --out "$work/p1.html"
expect_absent "explore: no page after an error" "$work/p1.html"
expect_error "explore: a bad --compare checkpoint" "bad/train.tsv" "$QKV" explore --checkpoint "$ckpt" --compare "$work/bad/train.tsv" --out "$work/p2.html"
expect_absent "explore: no page after a bad --compare" "$work/p2.html"
expect_error "explore: --out is required" "--out is required" "$QKV" explore --checkpoint "$ckpt"
expect_error "explore: an empty --sentence" "empty" "$QKV" explore --checkpoint "$ckpt" --sentence "  " --out "$work/p3.html"
expect_absent "explore: no page after an empty sentence" "$work/p3.html"
expect_error "explore: --out in a missing folder" "nowhere" "$QKV" explore --checkpoint "$ckpt" --out "$work/nowhere/p.html"
bad_name="$work/bad$(printf '\xff').safetensors"  # a path that is not UTF-8 cannot go into the page's JSON
cp "$ckpt" "$bad_name"
expect_error "explore: a checkpoint path that is not UTF-8" "a checkpoint path or vocabulary word is not valid UTF-8" \
  "$QKV" explore --checkpoint "$bad_name" --out "$work/p4.html"
expect_absent "explore: no page after a path that is not UTF-8" "$work/p4.html"
expect_error "explore: a --sentence that is not UTF-8" "not valid UTF-8" "$QKV" explore --checkpoint "$ckpt" \
  --sentence "$(printf 'a \xff bank')" --out "$work/p5.html"

# ---- knockout and cues (issue 25) ----
"$QKV" attend --checkpoint "$ckpt" --knockout 4:0 "river bank flows" >"$work/out" 2>/dev/null &&
  grep -q "^without knockout: " "$work/out" && grep -q "^knockout of key 0 'river' from query 4" "$work/out" &&
  grep -Eq "^(changed|unchanged)$" "$work/out" && pass || fail "attend --knockout prints both translations: $(cat "$work/out")"
"$QKV" attend --checkpoint "$ckpt" --knockout 0:5 "river bank flows" >"$work/out" 2>/dev/null &&
  grep -q "^unchanged: query 0 never sees key 5 (a source word sees only the source)" "$work/out" && pass ||
  fail "attend --knockout of a key the query never sees says so: $(cat "$work/out")"
expect_error "attend --knockout not QUERY:KEY" "--knockout: expected QUERY:KEY" "$QKV" attend --checkpoint "$ckpt" --knockout 4-0 "river bank flows"
expect_error "attend --knockout past the map" "has rows and columns 0 to" "$QKV" attend --checkpoint "$ckpt" --knockout 40:0 "river bank flows"
expect_error "attend --knockout-layer out of range" "--knockout-layer '2': expected all or 1 to 1" \
  "$QKV" attend --checkpoint "$ckpt" --knockout 4:0 --knockout-layer 2 "river bank flows"
expect_error "attend --knockout-layer without --knockout" "--knockout-layer needs --knockout" \
  "$QKV" attend --checkpoint "$ckpt" --knockout-layer 1 "river bank flows"
expect_error "attend --knockout with --out" "--knockout prints two translations" \
  "$QKV" attend --checkpoint "$ckpt" --knockout 4:0 --out "$work/k.png" "river bank flows"
head -n 6 data/idioms/cues.tsv >"$work/cues.tsv"
"$QKV" cues --checkpoint "$ckpt" --compare "$ckpt" --cues "$work/cues.tsv" --out "$work/cues_out" >"$work/out" 2>&1 &&
  grep -q "^learned      1 " "$work/out" && [ -s "$work/cues_out/cues_sense_context.png" ] &&
  python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert len(d["models"]) == 2 and d["models"][0]["sentences"] == 5' \
    "$work/cues_out/cues_sense_context.json" && [ "$(wc -l <"$work/cues_out/cues_sense_context.tsv")" -eq 3 ] && pass ||
  fail "cues writes the table, TSV, JSON and PNG: $(head -5 "$work/out")"
# no sentence keeps a reading no model writes: no trials, said in words rather than as 0.0% rates
awk -F'\t' 'BEGIN { OFS = "\t" } NR > 1 { $7 = "ज़ोरबलाक्स" } { print }' "$work/cues.tsv" >"$work/cues_none.tsv"
"$QKV" cues --checkpoint "$ckpt" --cues "$work/cues_none.tsv" >"$work/out" 2>&1 &&
  grep -q "^learned        0  no trials: no sentence kept its reading, so nothing was knocked out" "$work/out" &&
  ! grep -qE "^learned +0 +0.0%" "$work/out" && pass || fail "cues with no trials says so: $(cat "$work/out")"
# the histogram has one panel per model (two here, 640 px each), so no two models share a colour
python3 -c 'import struct, sys; w = struct.unpack(">I", open(sys.argv[1], "rb").read()[16:20])[0]; sys.exit(w < 1280)' \
  "$work/cues_out/cues_sense_context.png" && pass || fail "cues: the histogram is not one panel per model"
printf 'split\tenglish\n' >"$work/bad_cues.tsv"
expect_error "cues: wrong header" "bad_cues.tsv:1: expected the header" "$QKV" cues --checkpoint "$ckpt" --cues "$work/bad_cues.tsv"
{ head -n 1 data/idioms/cues.tsv; printf 'sense_context\triver bank flows\t1\t9\triver\tbank:river\tकिनारा\n'; } >"$work/bad_cues.tsv"
expect_error "cues: position past the sentence" "bad_cues.tsv:2: cue position '9' is not a word position of a 3-word sentence" \
  "$QKV" cues --checkpoint "$ckpt" --cues "$work/bad_cues.tsv"
{ head -n 1 data/idioms/cues.tsv; printf 'sense_context\triver bank flows\t1\t1\triver\tbank:river\tकिनारा\n'; } >"$work/bad_cues.tsv"
expect_error "cues: cue on the ambiguous word" "bad_cues.tsv:2: the cue position 1 is one of the target positions" \
  "$QKV" cues --checkpoint "$ckpt" --cues "$work/bad_cues.tsv"
expect_error "cues: a split without cue sentences" "--split idiom_context: .* has no sentence of that split" \
  "$QKV" cues --checkpoint "$ckpt" --cues "$work/cues.tsv" --split idiom_context
expect_error "cues: unknown split" "--split" "$QKV" cues --checkpoint "$ckpt" --split role_swap

# ---- a first run's rough edges (issue 36) ----
# cues and probe follow --data from any folder: DIR/cues.tsv, not data/idioms/cues.tsv
mkdir -p "$work/cue_data" && cp "$work/cues.tsv" "$work/cue_data/cues.tsv" && head -n 2000 data/idioms/train.tsv >"$work/cue_data/train.tsv"
abs_ckpt=$(realpath "$ckpt") abs_qkv=$(realpath "$QKV")
(cd /tmp && "$abs_qkv" cues --checkpoint "$abs_ckpt" --data "$work/cue_data") >"$work/out" 2>&1 &&
  grep -q "5 sentences of $work/cue_data/cues.tsv" "$work/out" && pass || fail "cues --data DIR reads DIR/cues.tsv: $(head -3 "$work/out")"
(cd /tmp && "$abs_qkv" probe --checkpoint "$abs_ckpt" --data "$work/cue_data" --per-sense 4) >"$work/out" 2>&1
grep -q "data/idioms/cues.tsv" "$work/out" && fail "probe --data DIR still reads data/idioms/cues.tsv: $(head -3 "$work/out")" || pass
# suggestions: a swap is one edit; each unknown word with its own; a mistyped flag and split named
"$QKV" translate --checkpoint "$ckpt" "the bnak flows" >/dev/null 2>"$work/err"
grep -q "'bnak' (did you mean 'bank'" "$work/err" && pass || fail "bnak suggests bank first: $(cat "$work/err")"
"$QKV" translate --checkpoint "$ckpt" "zorblax bnak" >/dev/null 2>"$work/err"
grep -q "every word is unknown to this model" "$work/err" && pass || fail "a sentence of unknown words only: no warning: $(cat "$work/err")"
expect_error "mistyped flag named" "--chekpoint is not an option of qkv translate: did you mean --checkpoint\?" \
  "$QKV" translate --chekpoint "$ckpt" "river bank flows"
expect_error "mistyped split" "did you mean 'coordination'\?" "$QKV" eval --checkpoint "$ckpt" --split coordnation
"$QKV" >"$work/out" 2>"$work/err" && grep -q "Subcommands:\|SUBCOMMANDS\|Commands:" "$work/out" && [ ! -s "$work/err" ] && pass ||
  fail "plain qkv prints the help: $(head -3 "$work/out") $(cat "$work/err")"
# a CPU-only build on a machine with nvcc says which build it is and how to make the CUDA one
if "$QKV" --version | grep -qi "cuda *off" && { command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; }; then
  expect_error "--device cuda on the CPU-only build beside nvcc" "CPU-only build of qkv.*make. builds the CUDA one" \
    "$QKV" translate --checkpoint "$ckpt" --device cuda "river bank flows"
fi

echo "cli: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
