"""tools/explorer/decide_cues.py — the explorer's "What decides a word?" measured on cues.tsv: for
each sense_context sentence whose translation holds the ambiguous word's reading, and where hiding
the cue from every query flips that reading, the cue's rank in the page's ranking for the reading's
Hindi word (hidden from every query; the ambiguous word itself left out), and where the
teacher-forced view alone would have put it. Drives the page in
headless Chromium (tests/browser/cdp.py).
Usage: python3 tools/explorer/decide_cues.py CHROMIUM PAGE.html [CUES.tsv] [LIMIT]"""
import json
import sys

sys.path.insert(0, "tests/browser")
from cdp import Browser  # noqa: E402

chromium, page = sys.argv[1], sys.argv[2]
cues = sys.argv[3] if len(sys.argv) > 3 else "data/idioms/cues.tsv"
limit = int(sys.argv[4]) if len(sys.argv) > 4 else 10**9
browser = Browser(chromium, f"file://{page}", width=1500, height=1300)
ranks, considered, flipped = {"ranked": [], "forced": [], "all": []}, 0, 0  # ranks: the cue's in each order
try:
    for line in open(cues, encoding="utf-8").read().splitlines()[1:]:
        split, english, target, cue_position, cue, label, readings = line.split("\t")
        if split != "sense_context" or considered >= limit:
            continue
        got = browser.evaluate(f"""(() => {{
          const m = MODELS[0], r = translate(m, {json.dumps(english)}), readings = {json.dumps(readings.split())};
          if (r.error) return null;
          const t = r.hindi.findIndex(w => readings.includes(w));
          if (t < 0) return {{held: false}};
          const knocked = translate(m, {json.dumps(english)}, {{keys: new Set([{int(cue_position)}]), from: "all"}});
          if (knocked.hindi.some(w => readings.includes(w))) return {{held: true, flips: false}};
          const targets = {json.dumps([int(x) for x in target.split()])};
          const d = decides(m, r, t, "all").ranking, keep = d.filter(e => !targets.includes(e.k));
          const forced = [...keep].sort((a, b) => a.forcedP - b.forcedP || a.k - b.k);
          return {{held: true, flips: true, ranked: keep.map(e => e.k), forced: forced.map(e => e.k), all: d.map(e => e.k)}};
        }})()""")
        if not got or not got["held"]:
            continue
        considered += 1
        if not got["flips"]:
            continue
        flipped += 1
        for order, found in ranks.items():
            found.append(got[order].index(int(cue_position)) + 1)
finally:
    browser.close()
first = {order: sum(r == 1 for r in found) for order, found in ranks.items()}
print(json.dumps({"sentences_with_reading": considered, "cue_knockout_flips": flipped, "cue_first": first["ranked"],
                  "cue_first_share": first["ranked"] / flipped if flipped else None,
                  "teacher_forced_cue_first": first["forced"],
                  "cue_first_with_the_word_itself": first["all"], "ranks": ranks["ranked"]}))
