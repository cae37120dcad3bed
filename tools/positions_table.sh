#!/usr/bin/env bash
# tools/positions_table.sh — the measurement behind RESULTS.md's position-scheme table: trains the
# default model under each --positions scheme, learned and static attention, for each seed, then
# evaluates every split (`qkv eval --split all`) and prints one markdown row per (scheme, mode) with
# each split's exact match as the mean and range over the seeds. Runs LANES trainings at a time at
# one thread each. EXTRA names hand-written .tsv files scored too (one column each).
#   QKV=build/qkv SCHEMES="absolute rotary absolute+rotary alibi" MODES="learned static" SEEDS="1 2 3" \
#     EXTRA="data/recombination.tsv data/independent.tsv" LANES=2 OUT=/tmp/positions \
#     bash tools/positions_table.sh [extra qkv train options]
set -euo pipefail
QKV=${QKV:-build/qkv}
SCHEMES=${SCHEMES:-"absolute rotary absolute+rotary alibi"}
EXTRA=${EXTRA:-"data/recombination.tsv data/independent.tsv"}
MODES=${MODES:-"learned static"}
SEEDS=${SEEDS:-"1 2 3"}
LANES=${LANES:-2}
OUT=${OUT:-/tmp/positions}
mkdir -p "$OUT"

evaluate() {  # dir split json: the split's scores written to JSON (once: kept from an earlier run)
  [ -f "$3" ] && return
  "$QKV" eval --checkpoint "$1/model.safetensors" --split "$2" --format json --threads 1 > "$3.tmp"
  mv "$3.tmp" "$3"
}

run_one() {  # scheme mode seed extra...
  local scheme=$1 mode=$2 seed=$3; shift 3
  local dir="$OUT/${scheme/+/_}-$mode-$seed" file
  if [ ! -f "$dir/eval.json" ]; then
    "$QKV" train --positions "$scheme" --attention "$mode" --seed "$seed" --threads 1 --out "$dir" --force "$@" \
      > "$dir.log" 2>&1
    evaluate "$dir" all "$dir/eval.json"
  fi
  for file in $EXTRA; do evaluate "$dir" "$file" "$dir/extra-$(basename "$file").json"; done  # extra-NAME.json
}

for scheme in $SCHEMES; do
  for mode in $MODES; do
    for seed in $SEEDS; do
      while [ "$(jobs -rp | wc -l)" -ge "$LANES" ]; do sleep 2; done
      run_one "$scheme" "$mode" "$seed" "$@" &
    done
  done
done
wait

python3 - "$OUT" "$SCHEMES" "$MODES" "$SEEDS" "$EXTRA" <<'PY'
import json, os, sys
out = sys.argv[1]
schemes, modes, seeds, extra = (arg.split() for arg in sys.argv[2:])
files = ["eval.json"] + [f"extra-{os.path.basename(path)}.json" for path in extra]
splits, rows = None, []
for scheme in schemes:
    for mode in modes:
        per_split = {}
        for seed in seeds:
            run = os.path.join(out, f"{scheme.replace('+', '_')}-{mode}-{seed}")
            for name in files:
                for row in json.load(open(os.path.join(run, name)))["splits"]:
                    per_split.setdefault(os.path.basename(row["split"]), []).append(100 * row["exact_match"])
        if splits is None:
            splits = list(per_split)
        cells = (f"{sum(v) / len(v):.1f} ({min(v):.1f}–{max(v):.1f})" for v in (per_split[name] for name in splits))
        rows.append(f"| {scheme} | {mode} | " + " | ".join(cells) + " |")
print("| positions | attention | " + " | ".join(splits) + " |")
print("|---|---|" + "---|" * len(splits))
print("\n".join(rows))
PY
