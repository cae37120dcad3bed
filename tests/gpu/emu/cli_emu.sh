#!/usr/bin/env bash
# tests/gpu/emu/cli_emu.sh — the qkv program's --device cuda paths (train, eval, translate, attend
# and the device errors) on the emulated device, each compared with the same command on the CPU.
# Run by `make gpu-emu-test` from the repository root (about 20 s: a tiny model on 96 pairs).
set -u
QKV=${QKV:-build/qkv}
QKV_EMU=${QKV_EMU:-build/emu/qkv_emu}
source "$(dirname "$0")/../../cli/lib.sh"

mkdir -p "$work/data"
head -n 96 data/idioms/train.tsv >"$work/data/train.tsv"
# valid and test: the first 16 sentences no longer than the longest of those 96 (qkv refuses others)
fits() {
  awk -F'\t' -v n=16 'NR == FNR { e = split($1, a, " "); h = split($2, b, " ");
                                 if (e > me) me = e; if (h > mh) mh = h; next }
                       split($1, a, " ") <= me && split($2, b, " ") <= mh && k++ < n' "$work/data/train.tsv" "$1"
}
fits data/idioms/valid.tsv >"$work/data/valid.tsv"
fits data/idioms/test.tsv >"$work/data/test.tsv"
tiny=(--epochs 2 --batch 32 --layers 1 --d-model 16 --d-k 8 --d-ff 32 --data "$work/data")
sentence=$(head -n 1 "$work/data/test.tsv" | cut -f1)

# train on both devices: the per-epoch figures agree to 4 decimals
if "$QKV_EMU" train --device cuda "${tiny[@]}" --out "$work/gpu" >"$work/gpu.log" 2>&1 &&
   "$QKV" train --device cpu "${tiny[@]}" --out "$work/cpu" >"$work/cpu.log" 2>&1; then
  round() { awk -F, 'NR > 1 { printf "%d %.4f %.4f %.4f %.4f\n", $1, $2, $3, $4, $5 }' "$1"; }
  if [ "$(round "$work/gpu/metrics.csv")" = "$(round "$work/cpu/metrics.csv")" ]; then pass
  else fail "train: metrics differ between cuda and cpu"; paste -d'|' "$work/gpu/metrics.csv" "$work/cpu/metrics.csv"; fi
else
  fail "train --device cuda or cpu failed"; tail -3 "$work/gpu.log" "$work/cpu.log"
fi
ckpt="$work/gpu/model.safetensors"

# the checkpoint written from the GPU evaluates the same on both devices
if [ -f "$ckpt" ]; then
  # every column but the last (sentences decoded per second, a speed)
  a=$("$QKV_EMU" eval --checkpoint "$ckpt" --device cuda --data "$work/data" 2>&1 | awk '{ $NF = ""; print }')
  b=$("$QKV" eval --checkpoint "$ckpt" --device cpu --data "$work/data" 2>&1 | awk '{ $NF = ""; print }')
  [ -n "$a" ] && [ "$a" = "$b" ] && pass || fail "eval: cuda '$a' vs cpu '$b'"
  a=$("$QKV_EMU" translate --checkpoint "$ckpt" --device cuda "$sentence" 2>&1)
  b=$("$QKV" translate --checkpoint "$ckpt" "$sentence" 2>&1)
  [ -n "$a" ] && [ "$a" = "$b" ] && pass || fail "translate: cuda '$a' vs cpu '$b'"
  # reranked by a channel model (trained the other way round on the CPU): the same on both devices
  if "$QKV" train --device cpu "${tiny[@]}" --reverse --out "$work/reverse" >/dev/null 2>&1; then
    a=$("$QKV_EMU" translate --checkpoint "$ckpt" --device cuda --channel "$work/reverse/model.safetensors" --beam 3 "$sentence" 2>&1)
    b=$("$QKV" translate --checkpoint "$ckpt" --channel "$work/reverse/model.safetensors" --beam 3 "$sentence" 2>&1)
    [ -n "$a" ] && [ "$a" = "$b" ] && pass || fail "translate --channel: cuda '$a' vs cpu '$b'"
  else
    fail "train --reverse on the cpu failed"
  fi
  "$QKV_EMU" attend --checkpoint "$ckpt" --device cuda --format csv "$sentence" >"$work/gpu.csv" 2>/dev/null
  "$QKV" attend --checkpoint "$ckpt" --format csv "$sentence" >"$work/cpu.csv" 2>/dev/null
  # same labels, weights within 1e-5
  if [ -s "$work/gpu.csv" ] && [ "$(head -n 1 "$work/gpu.csv")" = "$(head -n 1 "$work/cpu.csv")" ] &&
     paste -d'\n' "$work/gpu.csv" "$work/cpu.csv" | awk -F, 'NR % 2 { split($0, g, ","); next }
       { for (i = 2; i <= NF; ++i) if (FNR > 2 && (g[i] - $i > 1e-5 || $i - g[i] > 1e-5)) bad = 1 }
       END { exit bad }'; then pass
  else fail "attend: cuda and cpu weights differ"; fi
  "$QKV_EMU" attend --checkpoint "$ckpt" --device cuda --out "$work/map.png" "$sentence" >/dev/null 2>&1
  [ -s "$work/map.png" ] && pass || fail "attend --device cuda wrote no PNG"
else
  fail "no checkpoint from the cuda run"
fi

# device errors: one line on stderr, non-zero exit, no output directory
expect_error "no device" "no CUDA device available \(cudaErrorNoDevice" \
  env QKV_EMU_DEVICES=0 "$QKV_EMU" train --device cuda "${tiny[@]}" --out "$work/bad"
expect_absent "no device" "$work/bad"
expect_error "missing device index" "cuda:3 does not exist: 1 CUDA device" \
  "$QKV_EMU" train --device cuda:3 "${tiny[@]}" --out "$work/bad"
expect_absent "missing device index" "$work/bad"
expect_error "eval on a missing device" "cuda:3 does not exist" \
  "$QKV_EMU" eval --checkpoint "$ckpt" --device cuda:3 --data "$work/data"

echo "cli on the emulated device: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
