# data/cues.py — the side file data/idioms/cues.tsv: for each sentence with an ambiguous word or an
# idiom, the 0-based English positions of that word (or the idiom's fixed words) and of its cue.
# It only reads the features the frames record; it draws nothing and changes no corpus file.
from collections import Counter

from grammar import NOUNS, VERBS

# The fixed words of each idiom (and of its literal twin), whatever the verb's tense.
IDIOM_WORDS = {
    "cake": "piece of cake", "leg": "a leg", "spill": "the beans", "feet": "cold feet",
    "weather": "the weather", "sack": "the sack", "books": "the books", "hot": "hot water",
    "arm": "an arm and a leg", "blue_moon": "blue moon", "cat": "the cat out of the bag",
    "ice": "the ice",
}
HEADER = "split\tenglish\ttarget_positions\tcue_position\tcue\tlabel\treading_hindi"

# The Hindi words that carry each idiom's (idiomatic, literal) reading, from the frames' docstrings; a
# sentence whose reference translation holds none of its reading's words is dropped, so the list is checked.
IDIOM_HINDI = {
    "cake": ("आसान", "टुकड़ा टुकड़े"), "leg": ("शुभकामनाएँ", "टांग टांगें"), "spill": ("राज़", "फलियाँ फलियों"),
    "feet": ("घबरा घबराया घबराई घबराए घबराती घबराता घबराते", "पैर"), "weather": ("तबीयत", "मौसम"),
    "sack": ("सोने", "बोरे बोरों बोरा"), "books": ("पढ़ाई", "किताबों किताबें किताब"), "hot": ("मुसीबत", "गर्म"),
    "arm": ("महंगा महंगी महंगे", "हाथ"), "blue_moon": ("कम", "चाँद"), "cat": ("राज़", "बिल्ली बिल्लियों बिल्लियाँ"),
    "ice": ("बातचीत", "बर्फ़"),
}
# light as a weight is an adjective (हल्का, agreeing) and the river bank has no entry of its own
# (किनारा); every other sense is a noun of NOUNS.
SENSE_HINDI = {("light", "weight"): "हल्का हल्के हल्की", ("bank", "river"): "किनारा किनारे किनारों"}


def reading_hindi(f):
    """The Hindi words of the sentence's reading of its ambiguous word or idiom."""
    if "idiom" in f:
        key, reading = f["idiom"]
        return set(IDIOM_HINDI[key][0 if reading == "idiom" else 1].split())
    word, sense = f["sense"]
    if (word, sense) in SENSE_HINDI:
        return set(SENSE_HINDI[(word, sense)].split())
    return {w for w in NOUNS[f"{word}_{sense}"][2] if w}


def surface_forms(key):
    """Every English word form a cue key may take: itself, a noun's singular and plural, a verb's
    four forms, an adjective's word (keys like old_thing name the word before the underscore)."""
    forms = {key, key.split("_")[0]}
    if key in NOUNS:
        forms.update(f for f in NOUNS[key][:2] if f)
    if key in VERBS:
        forms.update(VERBS[key][0])
    return forms


def target_span(s):
    """(positions, label) of the sentence's ambiguous word or idiom, or (None, reason)."""
    words, f = s["en"].split(), s["feats"]
    if "sense" in f:
        word, sense = f["sense"]
        forms = surface_forms(word) | {f for k, e in NOUNS.items() if k.startswith(word + "_") for f in e[:2] if f}
        hits = [i for i, w in enumerate(words) if w in forms]
        return ([hits[0]], f"{word}:{sense}") if len(hits) == 1 else (None, "ambiguous word not found once")
    if "idiom" in f:
        key, reading = f["idiom"]
        phrase = IDIOM_WORDS[key].split()
        starts = [i for i in range(len(words) - len(phrase) + 1) if words[i:i + len(phrase)] == phrase]
        if len(starts) != 1:
            return None, "idiom words not found once"
        return list(range(starts[0], starts[0] + len(phrase))), f"{key}:{reading}"
    return None, "no ambiguous word"


def cue_rows(named_sentences):
    """Rows (split, english, positions, cue position, cue key, label) for (split, sentence) pairs,
    and a Counter of the sentences dropped, by reason. A cue must be found exactly once outside
    the ambiguous word or idiom, or the sentence is dropped."""
    rows, dropped = [], Counter()
    for split, s in named_sentences:
        f = s["feats"]
        if "sense" not in f and "idiom" not in f:
            continue
        span, reason = target_span(s)
        if span is None:
            dropped[reason] += 1
            continue
        if "cue" not in f:
            dropped["no cue recorded"] += 1
            continue
        forms = surface_forms(f["cue"])
        words = s["en"].split()
        hits = [i for i, w in enumerate(words) if w in forms and i not in span]
        if not hits and any(words[i] in forms for i in span):
            dropped["the cue is the ambiguous word itself"] += 1
            continue
        if len(hits) != 1:
            dropped["cue found 0 times" if not hits else "cue found more than once"] += 1
            continue
        reading = reading_hindi(f)
        found = sorted(w for w in set(s["hi"].split()) if w in reading)
        if not found:
            dropped["the reading's Hindi words are not in the reference"] += 1
            continue
        rows.append((split, s["en"], span, hits[0], f["cue"], reason, " ".join(sorted(reading))))
    return rows, dropped


def write_cues(path, rows):
    with open(path, "w", encoding="utf-8", newline="\n") as out:
        out.write(HEADER + "\n")
        for split, english, span, cue, key, label, hindi in rows:
            out.write(f"{split}\t{english}\t{','.join(map(str, span))}\t{cue}\t{key}\t{label}\t{hindi}\n")
