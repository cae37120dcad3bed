#!/usr/bin/env bash
# tools/length_test.sh — the length test behind RESULTS.md: a data folder whose train and valid
# pairs have at most SHORT English words (from data/idioms), whose test.tsv holds the test pairs of
# the same length and long.tsv the test pairs of LONG_FROM to LONG_TO words; the default model is
# trained on it under each --positions scheme (absolute with a layout wide enough to read the long
# pairs, so its untrained positions are measured rather than skipped), and each split's exact
# match is printed as a markdown row.
#   QKV=build/qkv SCHEMES="absolute rotary absolute+rotary rotary:64" SEEDS="1" OUT=/tmp/length bash tools/length_test.sh
# (rotary:64 is rotary with --random-positions 64; plain rotary is qkv train's default, randomized
# positions from three times the layout, and rotary:0 turns them off)
# With LONG_TARGETS=N the long pairs are long on the Hindi side instead: every split keeps pairs of at
# most SHORT English and N Hindi words, and long.tsv holds test pairs of at most SHORT English words
# whose Hindi has N + 1 to 2 N words (targets up to twice train's longest, sources as long as train's).
set -euo pipefail
QKV=${QKV:-build/qkv}
SCHEMES=${SCHEMES:-"absolute rotary absolute+rotary"}
SEEDS=${SEEDS:-1}
SHORT=${SHORT:-8}
LONG_FROM=${LONG_FROM:-10}
LONG_TO=${LONG_TO:-14}
LANES=${LANES:-2}
OUT=${OUT:-/tmp/length}
data="$OUT/data"
mkdir -p "$data"
LONG_TARGETS=${LONG_TARGETS:-0}
# the pairs of FILE with lo..hi English words and, with LONG_TARGETS, t_lo..t_hi Hindi words
words() {  # FILE lo hi [t_lo t_hi]
  awk -F'\t' -v lo="$2" -v hi="$3" -v t_lo="${4:-0}" -v t_hi="${5:-1000000}" \
    '{ n = split($1, w, " "); m = split($2, h, " "); if (n >= lo && n <= hi && m >= t_lo && m <= t_hi) print }' "$1"
}
short=(1 "$SHORT") long_words=("$LONG_FROM" "$LONG_TO") long="of $LONG_FROM-$LONG_TO words"
if [ "$LONG_TARGETS" -gt 0 ]; then
  short+=(0 "$LONG_TARGETS")
  long_words=(1 "$SHORT" $((LONG_TARGETS + 1)) $((2 * LONG_TARGETS)))
  long="of at most $SHORT words with $((LONG_TARGETS + 1))-$((2 * LONG_TARGETS)) Hindi words"
  LONG_TO=$SHORT
fi
for split in train valid test; do words "data/idioms/$split.tsv" "${short[@]}" >"$data/$split.tsv"; done
words data/idioms/test.tsv "${long_words[@]}" >"$data/long.tsv"
# a layout that reads the long pairs: LONG_TO English words and the longest Hindi of long.tsv + <eos>
max_target=$(awk -F'\t' '{ n = split($2, w, " "); if (n > m) m = n } END { print m + 1 }' "$data/long.tsv" "$data/train.tsv")
echo "length test: $(wc -l <"$data/train.tsv") train pairs of at most $SHORT words; long.tsv: $(wc -l <"$data/long.tsv") pairs $long" >&2

run_one() {  # scheme[:L] seed (L: --random-positions L)
  local scheme=${1%%:*} seed=$2 dir="$OUT/${1/+/_}-$2" extra=() layout=()
  dir=${dir/:/_random}
  [ -f "$dir/eval.json" ] && return
  if [ "$1" != "$scheme" ]; then extra=(--random-positions "${1#*:}"); fi
  if [ "$scheme" != rotary ]; then layout=(--max-source "$LONG_TO" --max-target "$max_target"); fi
  "$QKV" train --data "$data" --positions "$scheme" "${extra[@]}" --seed "$seed" --threads 1 "${layout[@]}" --out "$dir" --force >"$dir.log" 2>&1
  "$QKV" eval --checkpoint "$dir/model.safetensors" --data "$data" --split all --format json --threads 1 >"$dir/eval.json.tmp"
  mv "$dir/eval.json.tmp" "$dir/eval.json"
}
for scheme in $SCHEMES; do
  for seed in $SEEDS; do
    while [ "$(jobs -rp | wc -l)" -ge "$LANES" ]; do sleep 2; done
    run_one "$scheme" "$seed" &
  done
done
wait
python3 - "$OUT" "$SCHEMES" "$SEEDS" <<'PY'
import json, os, sys
out, schemes, seeds = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
header = None
for scheme in schemes:
    cells = {}
    for seed in seeds:
        for row in json.load(open(os.path.join(out, f"{scheme.replace('+', '_').replace(':', '_random')}-{seed}", "eval.json")))["splits"]:
            cells.setdefault(row["split"], []).append(100 * row["exact_match"])
    if header is None:
        header = list(cells)
        print("| positions | " + " | ".join(header) + " |")
        print("|---|" + "---|" * len(header))
    print(f"| {scheme} | " + " | ".join(f"{sum(v) / len(v):.1f} ({min(v):.1f}–{max(v):.1f})" for v in (cells[h] for h in header)) + " |")
PY
