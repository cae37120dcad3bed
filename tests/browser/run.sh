#!/usr/bin/env bash
# tests/browser/run.sh — the explorer page (qkv explore) in headless Chromium: for 50+ sentences
# the page's JavaScript forward pass must give the same translations as `qkv translate` and the
# same attention weights (within 1e-5) as `qkv attend --format json`, for every layer and model,
# with float32 weights (the default). With --weights float16 it prints how many translations still
# match, and at most 2 of the 100 may differ (a near tie can go the other way; the rest must match,
# with weights within 0.01). The page's controls are driven through the DevTools protocol
# (interact.py). Then a page fed markup (issue 26) must still translate and run no script smuggled
# into its data.
# Prints "skipped: chromium not installed" and passes where Chromium is missing.
set -u
QKV=${QKV:-build/qkv}
# CHROMIUM=path picks the browser; CHROMIUM= (empty) runs as if none were installed.
CHROMIUM=${CHROMIUM-$(command -v chromium || command -v chromium-browser || true)}
if [ -z "$CHROMIUM" ]; then
  echo "explorer browser test skipped: chromium not installed (QKV_WITH_BROWSER=1 bash tools/setup.sh installs it)"
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: explorer browser test: $*"; exit 1; }

# Two small models on a slice of the dataset: learned with 2 layers and the default's randomized
# rotary positions and a rotary base of its own, 500 (the page turns q and k as the C++ does, by the
# same angles and spread by the same stride), static with
# 1 and absolute positions (gelu, to
# check the page's erf too). Quality does not matter here, only agreement.
mkdir -p "$work/data"
head -n 8000 data/idioms/train.tsv >"$work/data/train.tsv"
head -n 200 data/idioms/valid.tsv >"$work/data/valid.tsv"
head -n 200 data/idioms/test.tsv >"$work/data/test.tsv"
small=(--data "$work/data" --epochs 2 --d-model 32 --d-k 16 --d-ff 64)
"$QKV" train "${small[@]}" --layers 2 --positions rotary --rotary-base 500 --out "$work/learned" >"$work/log" 2>&1 || { cat "$work/log"; fail "training the learned model"; }
"$QKV" train "${small[@]}" --attention static --layers 1 --activation gelu --positions absolute --out "$work/static" >"$work/log" 2>&1 ||
  { cat "$work/log"; fail "training the static model"; }
models=("$work/learned/model.safetensors" "$work/static/model.safetensors")

# 50 sentences: the i.i.d. test split and each generalisation split, plus an unknown word.
{
  cut -f1 data/idioms/test.tsv | awk 'length($0) > 0' | head -n 30
  for s in idiom_context sense_context role_swap deeper; do cut -f1 "data/idioms/$s.tsv" | head -n 4; done
  echo "ravi saw a zorblax in the garden"
  echo "the exam was a piece of cake"
  echo "money bank grows"
  echo "river bank flows"
} >"$work/sentences.txt"
count=$(wc -l <"$work/sentences.txt")
[ "$count" -ge 50 ] || fail "only $count sentences"

"$QKV" explore --checkpoint "${models[0]}" --compare "${models[1]}" --out "$work/page32.html" >/dev/null ||
  fail "qkv explore"
"$QKV" explore --checkpoint "${models[0]}" --compare "${models[1]}" --weights float16 --out "$work/page16.html" >/dev/null ||
  fail "qkv explore --weights float16"
size32=$(wc -c <"$work/page32.html") size16=$(wc -c <"$work/page16.html")
[ "$size16" -lt "$size32" ] || fail "the float16 page ($size16 bytes) is not smaller than the float32 one ($size32)"
# The C++ side for model INDEX: translations, then every layer's attention for each sentence of
# DIR/sentences.txt: cli_side DIR INDEX CHECKPOINT LAYERS WHAT
cli_side() {
  local dir=$1 m=$2 checkpoint=$3 layers=$4 what=$5
  "$QKV" translate --checkpoint "$checkpoint" --input "$dir/sentences.txt" >"$dir/translate.$m.tsv" 2>/dev/null ||
    fail "qkv translate --input ($what)"
  for layer in $(seq 1 "$layers"); do
    : >"$dir/attend.$m.$layer.jsonl"
    while IFS= read -r s; do
      "$QKV" attend --checkpoint "$checkpoint" --layer "$layer" --format json "$s" 2>/dev/null |
        python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)))' >>"$dir/attend.$m.$layer.jsonl" ||
        fail "qkv attend ($what) on '$s'"
    done <"$dir/sentences.txt"
  done
}
cli_side "$work" 0 "${models[0]}" 2 "model 0"
cli_side "$work" 1 "${models[1]}" 1 "model 1"

# The page: the sentences go in the URL's fragment; --dump-dom prints the DOM once the page's
# (synchronous) script has written its results.
fragment=$(python3 -c 'import json,sys,urllib.parse; print(urllib.parse.quote(json.dumps([l.rstrip("\n") for l in open(sys.argv[1])])))' "$work/sentences.txt")
for bits in 32 16; do
  timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --dump-dom "file://$work/page$bits.html#test=$fragment" \
    >"$work/dom$bits.html" 2>"$work/chromium.log" || { tail -5 "$work/chromium.log"; fail "chromium --dump-dom (float$bits)"; }
done
python3 tests/browser/compare.py "$work" "$count" dom32.html 1e-5 float32 0 || fail "the page and the C++ forward pass disagree (above)"
python3 tests/browser/compare.py "$work" "$count" dom16.html 0.01 float16 2 ||
  fail "the page with float16 weights and the C++ forward pass disagree (above)"
echo "explorer browser test: page size $size32 bytes with float32 weights, $size16 with float16"

# One model alone on a page of its own, on DIR/sentences.txt, checked the same way:
# alone_on_a_page DIR CHECKPOINT LAYERS WHAT
alone_on_a_page() {
  local dir=$1 checkpoint=$2 layers=$3 what=$4 n fragment
  n=$(wc -l <"$dir/sentences.txt")
  "$QKV" explore --checkpoint "$checkpoint" --out "$dir/page.html" >/dev/null || fail "qkv explore ($what)"
  cli_side "$dir" 0 "$checkpoint" "$layers" "$what"
  fragment=$(python3 -c 'import json,sys,urllib.parse; print(urllib.parse.quote(json.dumps([l.rstrip("\n") for l in open(sys.argv[1])])))' "$dir/sentences.txt")
  timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --dump-dom "file://$dir/page.html#test=$fragment" \
    >"$dir/dom.html" 2>"$work/chromium.log" || { tail -5 "$work/chromium.log"; fail "chromium --dump-dom ($what)"; }
  python3 tests/browser/compare.py "$dir" "$n" dom.html 1e-5 float32 0 "0:$layers" ||
    fail "the page and the C++ forward pass disagree for $what (above)"
}
# An alibi model (its distance bias on every score), on the same sentences.
mkdir -p "$work/alibi"
cp "$work/sentences.txt" "$work/alibi/sentences.txt"
"$QKV" train "${small[@]}" --layers 1 --positions alibi --out "$work/alibi/run" >"$work/log" 2>&1 ||
  { cat "$work/log"; fail "training the alibi model"; }
alone_on_a_page "$work/alibi" "$work/alibi/run/model.safetensors" 1 "an alibi model"
# The learned rotary model on sentences of data/long.tsv past its layout (every word in its vocabulary):
# the page scales their scores by the same (ln n / ln M)^length_scale as the C++ (--length-scale).
mkdir -p "$work/long"
python3 - "$work/learned/model.safetensors" data/long.tsv >"$work/long/sentences.txt" <<'PY' || fail "picking long sentences"
import json, struct, sys
with open(sys.argv[1], "rb") as f:
    meta = json.loads(f.read(struct.unpack("<Q", f.read(8))[0]))["__metadata__"]
known, layout = set(json.loads(meta["english_vocab"])), json.loads(meta["config"])["max_source"]
picked = [e for e in (line.split("\t")[0] for line in open(sys.argv[2], encoding="utf-8"))
          if len(e.split()) > layout and known.issuperset(e.split())][:8]
assert len(picked) >= 4, f"only {len(picked)} long sentences in the vocabulary"
print("\n".join(picked))
PY
alone_on_a_page "$work/long" "$work/learned/model.safetensors" 2 "the rotary model past its layout"

# The controls, through the DevTools protocol: the layer selector, clicks on rows, the line view, widths.
read_as="The Bnak opens."  # read as the CLI reads it: 'the bnak opens', with bank suggested for bnak
"$QKV" translate --checkpoint "${models[0]}" "$read_as" >"$work/read.out" 2>"$work/read.err" || fail "qkv translate '$read_as'"
# Knockout by hand: for 5 sentences and both models, the word the page hides (a click) must give
# the translation and weights of `qkv attend --knockout target:K --format json`.
: >"$work/knockouts.jsonl"
{ cut -f1 data/idioms/sense_context.tsv | head -n 3; cut -f1 data/idioms/test.tsv | head -n 2; } >"$work/knock_sentences.txt"
while IFS= read -r s; do
  for m in 0 1; do
    "$QKV" attend --checkpoint "${models[$m]}" --knockout target:1 --format json "$s" 2>/dev/null |
      python3 -c 'import json,sys; d=json.load(sys.stdin); d["model"]=int(sys.argv[1]); print(json.dumps(d, ensure_ascii=False))' "$m" \
      >>"$work/knockouts.jsonl" || fail "qkv attend --knockout target:1 --format json '$s'"
  done
done <"$work/knock_sentences.txt"
# The route (issue 54): for 3 sense_context sentences, a click on a weight of the route of 'bank's
# query hides the sentence's last word from that query in layer 2 only; model 0 must then give the
# translation and weights of `qkv attend --knockout Q:K --knockout-layer 2 --format json`.
: >"$work/cuts.jsonl"
while IFS= read -r s; do
  read -r -a words <<<"$s"
  for q in "${!words[@]}"; do [ "${words[$q]}" = bank ] && break; done
  "$QKV" attend --checkpoint "${models[0]}" --knockout "$q:$((${#words[@]} - 1))" --knockout-layer 2 --format json "$s" |
    python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin), ensure_ascii=False))' >>"$work/cuts.jsonl" || fail "qkv attend --knockout $q:$((${#words[@]} - 1)) --knockout-layer 2 '$s'"
done < <(head -n 3 "$work/knock_sentences.txt")
timeout 300 python3 tests/browser/interact.py "$CHROMIUM" "$work/page32.html" "$read_as" "$work/read.out" "$work/read.err" \
  "$work/knockouts.jsonl" "$work/cuts.jsonl" || fail "the page's controls (above)"

# Hostile inputs (issue 26): markup and U+2028 in the starting sentences, in a vocabulary word and
# in the checkpoint's file name. The page must still run its script and translate, and a script
# smuggled into its data must not run (it would mark <html data-pwned>).
ls_sep=$'\xe2\x80\xa8'
payload='</script><script>document.documentElement.setAttribute("data-pwned","1")</script>'
hostile_dir="$work/<!--<script> $ls_sep"
mkdir -p "$hostile_dir"
cp "${models[0]}" "$hostile_dir/m.safetensors"
python3 - "$hostile_dir/m.safetensors" "$payload" <<'PY' || fail "crafting the hostile checkpoint"
import json, sys; sys.path.insert(0, "tests/cli"); import safetensors_edit as e
m, t = e.read(sys.argv[1])
words = json.loads(m["english_vocab"]); words[-1] = "<!--<script>" + sys.argv[2] + "\u2028"
m["english_vocab"] = json.dumps(words, ensure_ascii=False, separators=(",", ":"))
e.write(sys.argv[1], m, t)
PY
"$QKV" explore --checkpoint "$hostile_dir/m.safetensors" --sentence "river bank <!--<script>" --sentence "$payload" \
  --sentence "money${ls_sep}bank & grows" --out "$work/hostile.html" >/dev/null 2>"$work/log" || { cat "$work/log"; fail "qkv explore (hostile)"; }
timeout 120 "$CHROMIUM" --headless --no-sandbox --disable-gpu --dump-dom \
  "file://$work/hostile.html#test=$(python3 -c 'import urllib.parse; print(urllib.parse.quote("[\"river bank flows\"]"))')" \
  >"$work/hostile_dom.html" 2>"$work/chromium.log" || { tail -5 "$work/chromium.log"; fail "chromium --dump-dom (hostile)"; }
python3 - "$work/hostile_dom.html" <<'PY' || fail "the page fed markup: it must translate, and run no injected script"
import html, json, re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
assert not re.search(r"<html[^>]*data-pwned", dom), "an injected script ran"
out = re.search(r'<pre id="qkv-test-output"[^>]*>(.*?)</pre>', dom, re.S)
assert out and out.group(1).strip(), "the page's script did not run"
results = json.loads(html.unescape(out.group(1)))
assert results[0][0].get("hindi"), results
PY
echo "explorer browser test: the page fed markup in its sentences, a word and its file name translates and runs no injected script"
