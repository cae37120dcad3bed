"""tests/browser/interact.py — drives the explorer page (qkv explore, two models: 2 layers and 1)
through Chromium's DevTools protocol: typing a sentence, the layer selector, clicks on query rows
(the highlighted row and the line view's lines) and the layout at 1500, 620 and 420 px wide.
With CLI_OUT and CLI_ERR (what `qkv translate` printed for READ_AS, with model 0) it also checks that
the page reads typed text as the CLI does: the same words, note, suggestions and translation.
Usage: interact.py CHROMIUM PAGE.html [READ_AS CLI_OUT CLI_ERR [KNOCKOUTS.jsonl [CUTS.jsonl]]]; prints one line per failed check
and exits 1 if any failed."""
import json
import sys

from cdp import Browser

chromium, page = sys.argv[1], sys.argv[2]
problems = []


def check(condition, what):
    if not condition:
        problems.append(what)
    return condition


browser = Browser(chromium, f"file://{page}", width=1500, height=1300)
js = browser.evaluate


def layout():
    """The page's width against the window's, and each model panel's box."""
    return js("""({scroll: document.documentElement.scrollWidth, window: innerWidth,
      panels: [...document.querySelectorAll('.model')].map(p => { const r = p.getBoundingClientRect();
        return {left: r.left, top: r.top, right: r.right, bottom: r.bottom}; })})""")


def choose_layer(value):
    js(f"""(() => {{ const s = document.getElementById('layer'); s.value = {json.dumps(value)};
      s.dispatchEvent(new Event('change')); }})()""")


def click_element(selector):
    """A real mouse click at the centre of the first element matching SELECTOR (scrolled into view)."""
    box = js(f"""(() => {{ const e = document.querySelector({json.dumps(selector)}); if (!e) return null;
      e.scrollIntoView({{block: 'center', inline: 'center'}}); const r = e.getBoundingClientRect();
      return [r.left + r.width / 2, r.top + r.height / 2]; }})()""")
    if check(box is not None, f"nothing on the page matches {selector}"):
        browser.click(*box)


def line_state(model):
    """The highlighted rows and the line view's lines of MODEL's panel."""
    return js(f"""(() => {{ const p = document.querySelector('.model[data-model="{model}"]');
      return {{selected: [...p.querySelectorAll('.attention-map .query-row.selected')].map(g => +g.dataset.query),
        outlines: p.querySelectorAll('.attention-map .row-outline').length,
        labels: p.querySelectorAll('.attention-map .row-label.selected').length,
        lines: [...p.querySelectorAll('.attention-map .attention-lines line')].map(l => +l.dataset.weight),
        rows: p.querySelectorAll('.attention-map .query-row').length,
        beside: (() => {{ const g = p.querySelector('.attention-map .attention-lines'), cells = [...p.querySelectorAll(
          '.attention-map .query-row')].pop(); if (!g || !g.getBBox().width) return null;
          return g.getBoundingClientRect().left >= cells.getBoundingClientRect().right; }})()}}; }})()""")


try:
    # Type a sentence and press the button (a real click).
    js("document.getElementById('sentence').value = 'river bank flows'")
    click_element("#go")
    words = 3
    state = js("""[...document.querySelectorAll('.model')].map(p => ({
      translation: p.querySelector('.translation')?.textContent,
      grid: p.querySelectorAll('.layer-grid figure').length}))""")
    check([s["grid"] for s in state] == [2, 1], f"'all layers' should draw 2 and 1 small maps, drew {[s['grid'] for s in state]}")
    check(all(s["translation"] for s in state), f"a model wrote no translation: {state}")
    labels = js("""[...document.querySelectorAll('.model')].map(p => [p.querySelector('h2').textContent,
      p.querySelector('p.about')?.textContent || ''])""")
    check([("learned" in h and "2 blocks" in h and "rotary" in h and "trained embeddings" in h, "W_q" in a)
           for h, a in labels[:1]] == [(True, True)] and
          "static" in labels[1][0] and "Q = K = V" in labels[1][1], f"each panel says what its model is: {labels}")
    options = js("[...document.getElementById('layer').options].map(o => o.textContent)")
    check(options == ["all layers", "layer 1", "layer 2"], f"layer selector offers {options}")

    # Typed text read as the CLI reads it (issue 36): lower case, punctuation dropped, the same note
    # and the same suggestions for each unknown word, and the same translation.
    if len(sys.argv) > 5:
        read_as, cli_out, cli_err = sys.argv[3], open(sys.argv[4], encoding="utf-8").read(), open(sys.argv[5], encoding="utf-8").read()
        js(f"document.getElementById('sentence').value = {json.dumps(read_as)}")
        click_element("#go")
        shown = js("""(() => { const p = document.querySelector('.model[data-model="0"]');
          return {note: p.querySelector('p.reading')?.textContent || '', translation: p.querySelector('.translation')?.textContent,
                  unknown: [...p.querySelectorAll('p.unknown')].map(e => e.textContent)}; })()""")
        cli_lines = [line.split(": ", 1)[1] for line in cli_err.splitlines() if line.startswith(("note: ", "warning: "))]
        check(shown["translation"] == cli_out.strip(), f"page translates {read_as!r} as {shown['translation']!r}, the CLI as {cli_out.strip()!r}")
        check([shown["note"]] + shown["unknown"] == cli_lines, f"page says {[shown['note']] + shown['unknown']}, the CLI {cli_lines}")
        check(any("did you mean 'bank'" in u for u in shown["unknown"]), f"no suggestion of 'bank' for a swapped 'bnak': {shown['unknown']}")
        js("document.getElementById('sentence').value = 'river bank flows'")
        click_element("#go")

    # Knockout by hand (issue 36): a click on a word of the hide bar hides it from the target queries
    # in every layer; the page's translation and weights must be the CLI's, for both models.
    if len(sys.argv) > 6:
        expected = [json.loads(line) for line in open(sys.argv[6], encoding="utf-8")]
        worst, checked = 0.0, 0
        for sentence in dict.fromkeys(e["sentence"] for e in expected):
            js(f"document.getElementById('sentence').value = {json.dumps(sentence)}")
            click_element("#go")
            click_element('#hide button[data-key="1"]')
            pressed = js("document.querySelector('#hide button[data-key=\"1\"]').getAttribute('aria-pressed')")
            check(pressed == "true", f"the hide button of word 1 is not pressed after a click ({pressed})")
            page = js("JSON.stringify(view.knocked.map(r => r && {hindi: r.hindi, attention: r.attention}))")
            page = json.loads(page)
            marked = js("[...document.querySelectorAll('.model')].map(p => p.querySelectorAll('.translation.knocked').length)")
            check(marked == [1, 1], f"{sentence!r}: each panel should show the knocked-out translation beside the old one: {marked}")
            for e in (x for x in expected if x["sentence"] == sentence):
                got = page[e["model"]]
                if not check(got is not None, f"{sentence!r}: model {e['model']} has no knocked-out translation"):
                    continue
                check(" ".join(got["hindi"]) == e["knocked_translation"],
                      f"{sentence!r} model {e['model']}: page {' '.join(got['hindi'])!r}, CLI {e['knocked_translation']!r}")
                for layer, (page_w, cli_w) in enumerate(zip(got["attention"], e["weights"])):
                    for row_p, row_c in zip(page_w, cli_w):
                        for a, b in zip(row_p, row_c):
                            worst = max(worst, abs((a or 0.0) - b))
                            checked += 1
            click_element('#hide button[data-key="1"]')  # a second click restores the word
            restored = js("view.hidden.size === 0 && document.querySelectorAll('.translation.knocked').length === 0")
            check(restored, f"{sentence!r}: a second click did not restore the word")
        check(checked > 0 and worst <= 1e-5, f"knocked-out weights: page against CLI differ by {worst:.2e} over {checked} cells")

        # No stale state (issue 54): with a row chosen at either end of the last layer's map and a
        # ranking open, hiding a word must redraw every panel with the CLI's knocked-out translation,
        # and restoring it the plain one, with no exception on the page.
        for sentence in dict.fromkeys(e["sentence"] for e in expected):
            for end in ("last", "first"):
                js(f"document.getElementById('sentence').value = {json.dumps(sentence)}")
                click_element("#go")
                choose_layer("1")
                rows = line_state(0)["rows"]
                row = rows - 1 if end == "last" else 0
                click_element(f'.model[data-model="0"] .attention-map .query-row[data-query="{row}"] rect[data-key="0"]')
                click_element('.model[data-model="0"] .decide button')
                plain = js("[...document.querySelectorAll('.model')].map(p => p.querySelector('.translation')?.textContent)")
                click_element('#hide button[data-key="1"]')
                shown = js("""[...document.querySelectorAll('.model')].map(p => p.querySelector('.translation.knocked')
                  ?.textContent.replace(/^.*?: /, '').replace(/ \\(gone: .*$/, ''))""")
                for e in (x for x in expected if x["sentence"] == sentence):
                    check(shown[e["model"]] == e["knocked_translation"],
                          f"{sentence!r}, {end} row chosen: panel {e['model']} shows {shown[e['model']]!r} after hiding word 1, "
                          f"the CLI {e['knocked_translation']!r}")
                state = line_state(0)
                check(len(state["selected"]) <= 1 and all(s < state["rows"] for s in state["selected"]),
                      f"{sentence!r}: the chosen row is not a row of the map shown: {state}")
                click_element('#hide button[data-key="1"]')
                back = js("[...document.querySelectorAll('.model')].map(p => p.querySelector('.translation')?.textContent)")
                check(back == plain, f"{sentence!r}: restoring word 1 shows {back}, before hiding {plain}")
        check(not browser.exceptions, f"the page threw: {browser.exceptions[:3]}")
        choose_layer("all")
        print(f"knockout by hand: {len(expected)} translations and {checked} weights match the CLI (largest difference {worst:.1e})")

        # The route (issue 54): a click on a weight of the chosen query's route hides that key from
        # that query in that layer only, as `qkv attend --knockout Q:K --knockout-layer L`.
        if len(sys.argv) > 7:
            cut_worst, cut_cells = 0.0, 0
            for e in (json.loads(line) for line in open(sys.argv[7], encoding="utf-8")):
                q, k, layer = int(e["knockout"]["queries"]), e["knockout"]["key"], int(e["knockout"]["layer"]) - 1
                js(f"document.getElementById('sentence').value = {json.dumps(e['sentence'])}")
                click_element("#go")
                choose_layer("0")
                click_element(f'.model[data-model="0"] .attention-map .query-row[data-query="{q}"] rect[data-key="0"]')
                cell = f'.model[data-model="0"] .route button[data-layer="{layer}"][data-key="{k}"]'
                route = js(f"""(() => {{ const t = document.querySelector('.model[data-model="0"] .route');
                  return t && [t.tBodies[0].rows.length, t.caption.textContent]; }})()""")
                check(route and route[0] == 2 and f"query {q} " in route[1], f"{e['sentence']!r}: the route of row {q}: {route}")
                click_element(cell)
                state = js(f"""(() => {{ const b = document.querySelector({json.dumps(cell)});
                  return {{pressed: b?.getAttribute('aria-pressed'), focused: document.activeElement === b,
                    line: document.querySelector('.model[data-model="0"] .translation.knocked')?.textContent || '',
                    other: document.querySelectorAll('.model[data-model="1"] .translation.knocked').length,
                    knocked: view.knocked[0] && {{hindi: view.knocked[0].hindi, attention: view.knocked[0].attention}}}}; }})()""")
                check(state["pressed"] == "true" and state["focused"], f"{e['sentence']!r}: the route cell after a click: {state['pressed']}, focus {state['focused']}")
                check(f"hidden from query {q} " in state["line"] and f"in layer {layer + 1}" in state["line"] and state["other"] == 0,
                      f"{e['sentence']!r}: the knocked line should name the cut, in model 0 only: {state['line']!r}, {state['other']}")
                got = state["knocked"]
                if check(got is not None, f"{e['sentence']!r}: no translation with the cut"):
                    check(" ".join(got["hindi"]) == e["knocked_translation"],
                          f"{e['sentence']!r} cut {q}:{k} layer {layer + 1}: page {' '.join(got['hindi'])!r}, CLI {e['knocked_translation']!r}")
                    for page_w, cli_w in zip(got["attention"], e["weights"]):
                        for row_p, row_c in zip(page_w, cli_w):
                            for a, b in zip(row_p, row_c):
                                cut_worst = max(cut_worst, abs((a or 0.0) - b))
                                cut_cells += 1
                    check(got["attention"][layer][q][k] is None, f"{e['sentence']!r}: the cut cell is not masked")
                click_element(cell)  # a second click restores it
                check(js("view.cuts[0].length === 0 && !document.querySelector('.translation.knocked')"),
                      f"{e['sentence']!r}: a second click on the cut did not restore it")
            check(cut_cells > 0 and cut_worst <= 1e-5, f"weights with a cut: page against CLI differ by {cut_worst:.2e} over {cut_cells} cells")
            check(not browser.exceptions, f"the page threw: {browser.exceptions[:3]}")
            choose_layer("all")
            print(f"the route: 3 cuts match the CLI ({cut_cells} weights, largest difference {cut_worst:.1e})")

        # "What decides this word?": every source word ranked once: those whose hiding substitutes
        # another word for it, then those whose hiding changes it otherwise, then the rest, each by the
        # probability's fall.
        js(f"document.getElementById('sentence').value = {json.dumps(expected[0]['sentence'])}")
        click_element("#go")
        click_element('.model[data-model="0"] .decide button')
        ranking = js("""[...document.querySelectorAll('.model[data-model="0"] .ranking li')].map(li => li.dataset.word)""")
        order = js("view.decide[0] ? view.decide[0].ranking.map(r => [r.replaced ? 1 : 0, r.changed ? 1 : 0, r.drop]) : []")
        source = js("view.results[0].words")
        check(sorted(ranking) == sorted(source) and order == sorted(order, reverse=True),
              f"the ranking should list every source word once, replaced, changed, kept, by falling drop: "
              f"{ranking} {order}")
        # each entry's verdict is the free re-translation's: hiding the word changes the chosen word
        # exactly when the page's own knockout translation no longer holds it at its place, and
        # replaces it exactly when that translation keeps the word after it (or it was the last) and
        # writes a word between the kept words around it
        verdicts = js("""(() => { const d = view.decide[0], r = view.results[0];
          return d.ranking.map(e => { const k = translate(MODELS[0], view.sentence, {keys: new Set([e.k]), from: d.from});
            const pairs = commonWords(r.hindi, k.hindi), kept = pairs.some(([i]) => i === d.t);
            const next = d.t + 1 === r.hindi.length ? [r.hindi.length, k.hindi.length] : pairs.find(([i]) => i === d.t + 1);
            const low = pairs.filter(([i]) => i < d.t).pop()?.[1] ?? -1;
            return [[e.changed, e.replaced], [!kept, !kept && next !== undefined && next[1] - low > 1]]; }); })()""")
        check(all(a == b for a, b in verdicts), f"'changes' or 'writes' disagrees with the knocked-out translation: {verdicts}")

        # On sense_context sentences of cues.tsv: where the ranking puts the cue for the ambiguous
        # word's Hindi (the word itself aside). Reported, not required: this small model barely
        # uses cues (RESULTS.md measures the default model).
        cue_ranks = []
        for line in open("data/idioms/cues.tsv", encoding="utf-8").read().splitlines()[1:]:
            split, english, target, cue_position, cue, label, readings = line.split("\t")
            if split != "sense_context" or len(cue_ranks) == 4:
                continue
            js(f"document.getElementById('sentence').value = {json.dumps(english)}")
            click_element("#go")
            hindi = js("view.results[0].hindi")
            at = [t for t, w in enumerate(hindi) if w in readings.split()]
            if not at:
                continue  # the model did not write that reading: nothing to explain
            click_element(f'.model[data-model="0"] .decide button:nth-of-type({at[0] + 1})')
            ranked = js("view.decide[0].ranking.map(r => r.k)")
            ranked = [k for k in ranked if str(k) not in target.split()]
            cue_ranks.append(ranked.index(int(cue_position)) + 1)
        check(cue_ranks, "no sense_context sentence of cues.tsv had its reading in the translation")
        print(f"what decides the ambiguous word: the cue's rank among the other words {cue_ranks}")
        js("document.getElementById('sentence').value = 'river bank flows'")
        click_element("#go")

    # "Most Hindi words" is --max-length: a limit of 2 cuts model 0's translation to 2 words at most
    # (the CLI's, checked word for word by run.sh), 0 and a limit past model 1's absolute layout are errors.
    js("document.getElementById('sentence').value = 'river bank flows'")
    js("document.getElementById('max-length').value = '2'")
    click_element("#go")
    cut = js("view.results.map(r => r.error ? null : r.hindi.length)")
    check(cut[0] is not None and cut[0] <= 2, f"most Hindi words 2: model 0 wrote {cut[0]} words")
    js("document.getElementById('max-length').value = '0'")
    click_element("#go")
    errors = js("[...document.querySelectorAll('.model p.error')].map(p => p.textContent)")
    check(len(errors) == 2 and all("must be a whole number from 1 to 1024, got '0'" in e for e in errors),
          f"most Hindi words 0 should be an error in each panel: {errors}")
    js("document.getElementById('max-length').value = ''")
    click_element("#go")

    # 1500 px: both models side by side, nothing wider than the window.
    box = layout()
    check(box["scroll"] <= box["window"], f"at 1500 px the page is {box['scroll']} px wide")
    check(len({round(p["top"]) for p in box["panels"]}) == 1, f"at 1500 px the models are not side by side: {box['panels']}")

    # Layer 1, then a click on a source word's row: that row highlighted, one line per source word.
    choose_layer("0")
    before = line_state(0)
    check(before["selected"] == [] and before["lines"] == [], f"lines before any click: {before}")
    click_element('.model[data-model="0"] .attention-map .query-row[data-query="1"] rect[data-key="2"]')
    after = line_state(0)
    check(after["selected"] == [1] and after["outlines"] == 1 and after["labels"] == 1,
          f"clicking row 1 should highlight row 1 only: {after}")
    check(len(after["lines"]) == words, f"query 'bank' sees {words} source words but {len(after['lines'])} lines were drawn")
    check(after["beside"], "the lines are not beside (right of) the matrix")
    check(abs(sum(after["lines"]) - 1) < 1e-6, f"the lines' weights sum to {sum(after['lines'])}, not 1")
    check(line_state(1)["selected"] == [], "a click in one model highlighted a row in the other")

    # The last row (the last target word) sees every token: one line per token.
    last = after["rows"] - 1
    click_element(f'.model[data-model="0"] .attention-map .query-row[data-query="{last}"] rect[data-key="0"]')
    after = line_state(0)
    check(after["selected"] == [last] and len(after["lines"]) == after["rows"],
          f"the last row ({last}) should draw {after['rows']} lines: {after}")

    # Layer 2: model 0 draws it, model 1 (one layer) says it has none.
    choose_layer("1")
    maps = js("[...document.querySelectorAll('.model')].map(p => p.querySelectorAll('.attention-map').length)")
    note = js("document.querySelector('.model[data-model=\"1\"] p.note')?.textContent || ''")
    check(maps == [1, 0] and "has 1 layer" in note, f"layer 2: maps {maps}, note {note!r}")

    # All layers, then a click on the second small map of model 0: it opens layer 2 with that row.
    choose_layer("all")
    click_element('.model[data-model="0"] .layer-grid figure:nth-child(2) .query-row[data-query="0"] rect[data-key="0"]')
    chosen = js("document.getElementById('layer').value")
    opened = line_state(0)
    check(chosen == "1" and opened["selected"] == [0] and len(opened["lines"]) == words,
          f"a click on layer 2's small map should open layer 2 with row 0: layer {chosen}, {opened}")

    # The keyboard: a focused row shows its tooltip, ArrowDown moves the chosen query, and Enter on a
    # small map opens its layer; SVGs have a role and a label, Hindi text lang="hi".
    choose_layer("0")
    js("""document.querySelector('.model[data-model="0"] .layer-view .query-row[data-query="0"]').focus()""")
    tip = js("document.getElementById('tooltip').style.display")
    browser.command("Input.dispatchKeyEvent", type="keyDown", key="ArrowDown", code="ArrowDown", windowsVirtualKeyCode=40)
    moved = js("[view.selected[0], document.activeElement?.dataset?.query]")
    check(tip == "block" and moved == [1, "1"], f"keyboard: tooltip on focus {tip!r}, ArrowDown from row 0 gave {moved}")
    choose_layer("all")
    js("""document.querySelector('.model[data-model="0"] .layer-grid figure:nth-child(2)').focus()""")
    browser.command("Input.dispatchKeyEvent", type="keyDown", key="Enter", code="Enter", windowsVirtualKeyCode=13)
    check(js("document.getElementById('layer').value") == "1", "keyboard: Enter on layer 2's small map does not open it")
    # Tab from the layer selector through the page: every stop is a control that does something
    # (no map of its own), and the "hide from" selector keeps the focus after a change (issue 54).
    choose_layer("0")
    js("document.getElementById('layer').focus()")
    stops = []
    for _ in range(60):
        browser.command("Input.dispatchKeyEvent", type="keyDown", key="Tab", code="Tab", windowsVirtualKeyCode=9)
        stops.append(js("document.activeElement.tagName.toLowerCase()"))
    check("svg" not in stops and "div" not in stops and "body" not in stops[:10], f"dead tab stops: {stops}")
    js("""(() => { const s = document.querySelector('#hide select'); s.focus(); s.value = 'all';
      s.dispatchEvent(new Event('change')); })()""")
    check(js("document.activeElement === document.querySelector('#hide select')"),
          "the 'hide from' selector lost the focus after a change")
    js("""(() => { const s = document.querySelector('#hide select'); s.value = 'target'; s.dispatchEvent(new Event('change')); })()""")
    roles = js("[...document.querySelectorAll('svg.attention-map')].every(s => s.getAttribute('role') && s.getAttribute('aria-label'))")
    hindi = js("[...document.querySelectorAll('.translation')].every(p => p.lang === 'hi')")
    check(roles and hindi, f"SVGs with role and label: {roles}; translations lang=hi: {hindi}")

    # Narrow windows: nothing wider than 620 px; at 420 px the models stack.
    for width in (620, 420):
        browser.command("Emulation.setDeviceMetricsOverride", width=width, height=900, deviceScaleFactor=1, mobile=False)
        box = layout()
        check(box["scroll"] <= width, f"at {width} px the page is {box['scroll']} px wide")
    first, second = box["panels"][:2]
    check(second["top"] >= first["bottom"], f"at 420 px the models do not stack: {box['panels']}")
    # A 13-word sentence at 420 and 1500 px: the map's labels stay at 11 px or more (the map scrolls).
    long = "the farmer and his old friends bought a new bat for the match"
    for width in (420, 1500):
        browser.command("Emulation.setDeviceMetricsOverride", width=width, height=900, deviceScaleFactor=1, mobile=False)
        js(f"document.getElementById('sentence').value = {json.dumps(long)}")
        click_element("#go")
        choose_layer("0")
        size = js("""(() => { const v = document.querySelector('.model[data-model="0"] .layer-view svg');
          return 12 * v.getBoundingClientRect().width / +v.getAttribute('viewBox').split(' ')[2]; })()""")
        wide = js("document.documentElement.scrollWidth")
        check(size >= 10.99 and wide <= width, f"13 words at {width} px: labels at {size:.1f} px, page {wide} px wide")
        if width == 1500:  # issue 54: a map wider than half the window whole in its panel, the line view in sight
            js(f"document.getElementById('sentence').value = {json.dumps(long + ' ' + long)}")  # model 0 is rotary
            click_element("#go")
            need = js("parseFloat(document.querySelector('.model[data-model=\"0\"] .layer-view svg').style.minWidth)")
            cut = js("""[...document.querySelectorAll('.layer-view')].map(v => v.scrollWidth - v.clientWidth)""")
            check(need > 750 and all(c <= 1 for c in cut),
                  f"26 words at 1500 px: a map needing {need} px is cut off in its panel by {cut} px")
finally:
    browser.close()

for p in problems:
    print(p)
if problems:
    sys.exit(f"{len(problems)} check(s) of the page's controls and layout failed")
print("explorer browser test: typed a sentence; the layer selector (all layers, 1, 2) and clicks on query rows "
      "highlight the row and draw one line per visible key; fits 1500, 620 and 420 px")
