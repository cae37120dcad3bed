"""tests/browser/compare.py — checks the explorer page's results (from chromium --dump-dom) against
qkv translate (TSV) and qkv attend --format json, written by tests/browser/run.sh into WORK.
Usage: compare.py WORK COUNT DOM_FILE TOLERANCE WEIGHTS ALLOWED [MODELS]: at most ALLOWED translations
(of COUNT x the models) may differ from qkv translate's, and where they agree every attention weight
must be within TOLERANCE; WEIGHTS (float32 or float16) names the page's weights in the messages.
MODELS lists the page's models as INDEX:LAYERS (default 0:2,1:1)."""
import html
import json
import re
import sys

work, count, dom_file, tolerance, weights = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4]), sys.argv[5]
allowed = int(sys.argv[6])
models = [tuple(int(x) for x in spec.split(":")) for spec in (sys.argv[7] if len(sys.argv) > 7 else "0:2,1:1").split(",")]
dom = open(f"{work}/{dom_file}", encoding="utf-8").read()
found = re.search(r'<pre id="qkv-test-output"[^>]*>(.*?)</pre>', dom, re.S)
if not found or not found.group(1).strip():
    sys.exit("the page wrote no results into #qkv-test-output (did its script fail?)")
page = json.loads(html.unescape(found.group(1)))
sentences = [line.rstrip("\n") for line in open(f"{work}/sentences.txt", encoding="utf-8")]
assert len(page) == len(sentences) == count, (len(page), len(sentences), count)

problems, different, matched, compared, worst = [], [], [0] * len(models), 0, 0.0
for m, layers in models:
    tsv = [line.rstrip("\n").split("\t") for line in open(f"{work}/translate.{m}.tsv", encoding="utf-8")]
    attends = {layer: [json.loads(l) for l in open(f"{work}/attend.{m}.{layer}.jsonl", encoding="utf-8")]
               for layer in range(1, layers + 1)}
    for i, sentence in enumerate(sentences):
        got = page[i][m]
        if "error" in got:
            problems.append(f"model {m}, '{sentence}': the page says {got['error']}")
            continue
        want = tsv[i][1].split() if len(tsv[i]) > 1 else []
        if tsv[i][0] != sentence:
            problems.append(f"model {m}: qkv translate's line {i + 1} is for {tsv[i][0]!r}, not {sentence!r}")
            continue
        if got["hindi"] != want:
            different.append(f"model {m}, '{sentence}': page {' '.join(got['hindi'])!r}, qkv translate {' '.join(want)!r}")
            continue
        matched[m] += 1
        if len(got["attention"]) != layers:
            problems.append(f"model {m}: the page drew {len(got['attention'])} layers, the model has {layers}")
            continue
        for layer in range(1, layers + 1):
            ref = attends[layer][i]
            if ref["labels"] != got["labels"]:
                problems.append(f"model {m} layer {layer}, '{sentence}': labels {got['labels']} vs {ref['labels']}")
                continue
            for r, (row, ref_row, ref_masked) in enumerate(zip(got["attention"][layer - 1], ref["weights"], ref["masked"])):
                for c, (w, ref_w, masked) in enumerate(zip(row, ref_row, ref_masked)):
                    if (w is None) != bool(masked):
                        problems.append(f"model {m} layer {layer}, '{sentence}': cell ({r}, {c}) masked differs")
                    elif w is not None:
                        worst = max(worst, abs(w - ref_w))
                        compared += 1
for p in problems[:10]:
    print(p)
for d in different[:10]:
    print(f"{weights}: a different translation ({len(different)} of {len(models) * count}, at most {allowed} allowed): {d}")
summary = f"with {weights} weights, translations equal to qkv translate's: " + ", ".join(
    f"model {m} {matched[m]}/{count}" for m, _ in models)
if problems:
    sys.exit(f"{len(problems)} disagreement(s) with {weights} weights in the page; {summary}")
if len(different) > allowed:
    sys.exit(f"{summary}: {len(different)} differ, at most {allowed} may")
if worst > tolerance:
    sys.exit(f"with {weights} weights in the page, attention weights differ by up to {worst:.3g} (allowed {tolerance:g})")
print(f"explorer browser test: {summary}; where equal, {compared} attention weights, max |page - qkv attend| = "
      f"{worst:.2e} (<= {tolerance:g})")
