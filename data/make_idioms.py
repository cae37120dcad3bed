# data/make_idioms.py — writes the English->Hindi corpus (data/idioms/*.tsv) from the synchronous
# grammar in data/grammar.py and data/frames/: the train/valid/test splits and the four
# generalisation splits; see data/README.md.  Standard library only; byte-identical on every run.
"""Run from the repository root:  python3 data/make_idioms.py [--out DIR] [--train-size N]

It checks the data (data/README.md, "How the splits are made", step 6) and exits non-zero if a check fails."""
import os
import random
import sys
import unicodedata
from collections import Counter, defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import frames  # noqa: E402
from grammar import NAMES, NOUNS, PRONOUNS, SAME_PAST  # noqa: E402
from cues import cue_rows, write_cues  # noqa: E402

SEED = 1234
MAX_EN = 14          # words of English
MAX_HI = 18          # words of Hindi
LONG_WORDS = range(15, 23)  # data/long.tsv: sentences longer than every train sentence
LONG_PER_LENGTH = 50
TRAIN_SIZE = 80000
VALID_SIZE = 2000
TEST_SIZE = 2000
GENERAL_SIZE = 400   # sentences in each generalisation split
MAX_TRAIN_DEPTH = 2  # adjectives + adjuncts in a training sentence; deeper has 3 or more
OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "idioms")

# Sentences train must contain (the showcase and the tutorial's phrases).
SHOWCASE = ["she ate a piece of cake", "the exam was a piece of cake", "money bank grows",
            "river bank flows"]

# ---- generalisation splits (data/README.md, "How the splits are made", tells why each holds what) ----
# idiom_context: each idiom reading without, in train, any sentence with one of two held-out values.
IDIOM_HOLD = [
    ("cake", "idiom", "subj_noun", "puzzle"), ("cake", "idiom", "tense", "fut"),
    ("cake", "literal", "subj", "name:sita"), ("cake", "literal", "tense", "prog"),
    ("leg", "idiom", "subj", "pron:we"), ("leg", "idiom", "event", "wedding"),
    ("leg", "literal", "subj", "name:amit"), ("leg", "literal", "place", "park"),
    ("spill", "idiom", "event", "meeting"), ("spill", "idiom", "subj_noun", "farmer"),
    ("spill", "literal", "place", "garden"), ("spill", "literal", "subj", "pron:they"),
    ("feet", "idiom", "event", "interview"), ("feet", "idiom", "subj_noun", "teacher"),
    ("feet", "literal", "place", "pond"), ("feet", "literal", "subj", "name:priya"),
    ("weather", "idiom", "subj_noun", "woman"), ("weather", "idiom", "subj", "name:rahul"),
    ("weather", "literal", "cue", "bad"), ("weather", "literal", "time", "tomorrow"),
    ("sack", "idiom", "event", "movie"), ("sack", "idiom", "subj_noun", "doctor"),
    ("sack", "literal", "cue", "hammer"), ("sack", "literal", "subj", "pron:i"),
    ("books", "idiom", "event", "test"), ("books", "idiom", "subj", "name:priya"),
    ("books", "literal", "cue", "shoe"), ("books", "literal", "subj", "pron:we"),
    ("hot", "idiom", "subj", "name:neha"), ("hot", "idiom", "subj_noun", "farmer"),
    ("hot", "literal", "object", "plate"), ("hot", "literal", "tense", "fut"),
    ("arm", "idiom", "subj_noun", "watch"), ("arm", "idiom", "subj_noun", "shirt"),
    ("arm", "literal", "subj_noun", "robot"), ("arm", "literal", "place", "park"),
    ("blue_moon", "idiom", "verb", "read"), ("blue_moon", "idiom", "subj", "pron:we"),
    ("blue_moon", "literal", "tense", "fut"), ("blue_moon", "literal", "subj", "name:neha"),
    ("cat", "idiom", "subj", "name:amit"), ("cat", "idiom", "subj_noun", "teacher"),
    ("cat", "literal", "subj", "name:rahul"), ("cat", "literal", "subj", "pron:she"),
    ("ice", "idiom", "event", "meeting"), ("ice", "idiom", "tense", "hab"),
    ("ice", "literal", "cue", "pond"), ("ice", "literal", "subj_noun", "boy"),
]
# sense_context: a word sense with a cue never seen with it in train, or with a distractor of the other sense.
SENSE_HOLD = [
    ("bat", "animal", "cue", "garden"), ("bat", "cricket", "cue", "market"),
    ("mouse", "animal", "cue", "forest"), ("mouse", "device", "cue", "shop"),
    ("bank", "river", "cue", "pond"), ("bank", "river", "distractor", "money"),
    ("bank", "money", "distractor", "snake"), ("bat", "animal", "distractor", "after_match"),
    ("light", "weight", "cue", "box"), ("light", "weight", "cue", "watch"),
    ("light", "lamp", "cue", "see"), ("letter", "mail", "cue", "show"),
    ("letter", "char", "cue", "door"),
]
# role_swap: pairs of names (subject, then another role) that train has only in this order.
SWAP_PAIRS = [("ravi", "priya"), ("amit", "neha"), ("rahul", "sita"), ("priya", "amit"),
              ("neha", "rahul"), ("sita", "ravi")]
# noun_roles (lexical): nouns that train never has in this role (subj: the subject; obj: an object,
# recipient, beneficiary or companion).
NOUN_ROLE_HOLD = [("subj", "snake"), ("subj", "ball"), ("obj", "child")]
# verb_objects (lexical): a verb and an object that train never has together.
VERB_OBJECT_HOLD = [("hit", "box"), ("break", "watch"), ("spill", "juice"), ("wash", "doll"), ("catch", "cat"),
                    ("cook", "bean")]
# coordination (structural): the positions train never coordinates: beneficiaries (for X and Y -> X और Y के लिए).
COORD_HOLD = {"ben"}
SPLITS = ["idiom_context", "sense_context", "role_swap", "deeper", "noun_roles", "verb_objects", "coordination"]


def matches(hold, key, feats):
    return any(key == (h[0], h[1]) and feats.get(h[2]) == h[3] for h in hold)


def held_splits(s):
    """Every generalisation split whose held-out combination the sentence has, in the order of SPLITS."""
    f = s["feats"]
    roles = set(f.get("roles", []))
    held = {
        "idiom_context": "idiom" in f and matches(IDIOM_HOLD, f["idiom"], f),
        "sense_context": "sense" in f and matches(SENSE_HOLD, f["sense"], f),
        "role_swap": any((b, a) in SWAP_PAIRS for a, b in f.get("pairs", [])),
        "deeper": s["depth"] > MAX_TRAIN_DEPTH,
        "noun_roles": bool(roles & set(NOUN_ROLE_HOLD)),
        "verb_objects": any(f.get("verb") == v and ("obj", o) in roles for v, o in VERB_OBJECT_HOLD),
        "coordination": bool(COORD_HOLD & set(f.get("coord", ()))),
    }
    return [split for split in SPLITS if held[split]]


def general_split(s):
    """The generalisation split a sentence belongs to, None for the i.i.d. pool, or "mixed" (used nowhere)
    when it has the held-out combinations of two splits, one of them new; among the four original
    splits, the first in SPLITS wins."""
    found = held_splits(s)
    new = [x for x in found if x in ("noun_roles", "verb_objects", "coordination")]
    if new and len(found) > 1:
        return "mixed"
    return found[0] if found else None


def group_of(split, s):
    """Strata for an even spread of each generalisation split."""
    f = s["feats"]
    if split == "idiom_context":
        return f["idiom"]
    if split == "sense_context":
        return f["sense"] + (("distractor",) if "distractor" in f else ())
    if split == "role_swap":
        return f["pair"]
    if split == "noun_roles":
        return tuple(sorted(set(f["roles"]) & set(NOUN_ROLE_HOLD)))
    if split in ("verb_objects", "coordination"):
        return f["verb"]
    return s["frame"]


# ---- drawing -----------------------------------------------------------------------------------
FRAME_NAMES = list(frames.FRAMES)
FRAME_WEIGHTS = [frames.FRAMES[n][1] for n in FRAME_NAMES]


def draw_any(rng):
    """One sentence of a frame chosen by the frames' weights, or None (see frames.draw)."""
    return frames.draw(rng, rng.choices(FRAME_NAMES, FRAME_WEIGHTS)[0])


def in_vocab(s, train_en, train_hi):
    """Whether every English and every Hindi word of the sentence occurs in train."""
    return all(w in train_en for w in s["en"].split()) and all(w in train_hi for w in s["hi"].split())


def draw_all(rng, train_size):
    by_english = {}
    pools = defaultdict(list)
    need = {None: train_size + VALID_SIZE + TEST_SIZE + 4000, **{k: GENERAL_SIZE * 4 for k in SPLITS}}
    attempts = 0
    while any(len(pools[k]) < v for k, v in need.items()):
        attempts += 1
        if attempts > 3_000_000:
            sys.exit("make_idioms: could not draw enough sentences: " +
                     ", ".join(f"{k}={len(pools[k])}" for k in need))
        s = draw_any(rng)
        if s is None or len(s["en"].split()) > MAX_EN or len(s["hi"].split()) > MAX_HI:
            continue
        old = by_english.get(s["en"])
        if old is not None:
            if old["hi"] != s["hi"]:
                sys.exit(f"make_idioms: '{s['en']}' has two translations: '{old['hi']}' / '{s['hi']}'")
            continue
        by_english[s["en"]] = s
        split = general_split(s)
        if split == "deeper" and s["depth"] > MAX_TRAIN_DEPTH + 2:
            continue
        pools[split].append(s)
    return pools, by_english


def choose_general(rng, pool, split, train_en, train_hi, max_en, max_hi):
    """GENERAL_SIZE sentences spread evenly over the split's strata, in-vocabulary and in length."""
    ok = [s for s in pool if in_vocab(s, train_en, train_hi) and
          len(s["en"].split()) <= max_en and len(s["hi"].split()) <= max_hi]
    groups = defaultdict(list)
    for s in ok:
        groups[group_of(split, s)].append(s)
    keys = sorted(groups, key=str)
    for k in keys:
        rng.shuffle(groups[k])
    chosen = []
    while len(chosen) < GENERAL_SIZE and any(groups[k] for k in keys):
        for k in keys:
            if groups[k] and len(chosen) < GENERAL_SIZE:
                chosen.append(groups[k].pop())
    if len(chosen) < GENERAL_SIZE:
        sys.exit(f"make_idioms: {split} has only {len(chosen)} usable sentences")
    return chosen


# ---- counting ----------------------------------------------------------------------------------
def count_plain_transitive():
    """Exact number of distinct English sentences of one sub-grammar: plain transitive clauses
    without adjectives, with at most one place and one simple-time adjunct."""
    subjects = [PRONOUNS[p][2] == 3 and PRONOUNS[p][4] == "sg" for p in PRONOUNS] + [True] * len(NAMES)  # 3rd singular?
    for key in frames.PERSON_NOUNS:
        for number, dets in (("sg", frames.SUBJECT_DETS_SG), ("pl", frames.SUBJECT_DETS_PL)):
            dets = set(dets)
            if key not in frames.POSSESSABLE:
                dets -= {"my", "his", "her", "our", "their"}
            subjects += [number == "sg"] * len(dets)
    places = 1 + len(frames.GENERAL_PLACES + frames.EVENT_PLACES) + len(frames.NEAR_PLACES)
    total = 0
    for verb, kind in frames.TRANSITIVE.items():
        objects = on_surface = 0  # on_surface: objects that may stand on the board/wall/door
        for key, entry in NOUNS.items():
            if kind not in entry[4]:
                continue
            n = len(set(frames.MASS_DETS)) if entry[1] is None else len(set(frames.OBJECT_DETS_SG)) + len(set(frames.OBJECT_DETS_PL))
            objects += n
            if verb in ("write", "read") and key in frames.SURFACE_OBJECTS:
                on_surface += n
        for third_sg in subjects:
            for tense in frames.verb_tenses(verb):
                times = 1 + sum(1 for v in frames.SIMPLE_TIMES.values() if tense in v[2])
                for negative in (False, True):
                    if verb in SAME_PAST and tense == "hab" and not negative and not third_sg:
                        continue
                    total += (objects * places + on_surface * len(frames.SURFACES)) * times
    return total


# ---- checks and output -------------------------------------------------------------------------
def check_field(text, hindi):
    if not text or text != text.strip() or "  " in text or "\t" in text:
        return "empty field or stray whitespace"
    if hindi:
        if unicodedata.normalize("NFC", text) != text:
            return "Hindi is not NFC"
        if any(not ("\u0900" <= c <= "\u097f" or c == " ") for c in text):
            return "Hindi has a character outside Devanagari"
    elif any(not (c.islower() and c.isascii() or c == " ") for c in text):
        return "English is not lowercase ASCII letters"
    return None


def write(path, rows):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for s in rows:
            f.write(f"{s['en']}\t{s['hi']}\n")


def draw_long(splits, train_en, train_hi):
    """LONG_PER_LENGTH sentences of each length in LONG_WORDS, from the same grammar but their own
    generator (the corpus stays as it is): English that no split holds, every word in train, no
    combination a generalisation split holds out but depth (a long sentence has more adjuncts)."""
    rng = random.Random(SEED + 1)
    seen = {s["en"] for rows in splits.values() for s in rows}
    by_length = defaultdict(list)
    for _ in range(2_000_000):
        if all(len(by_length[n]) >= LONG_PER_LENGTH for n in LONG_WORDS):
            break
        s = draw_any(rng)
        n = len(s["en"].split()) if s else 0
        if (n not in LONG_WORDS or len(by_length[n]) >= LONG_PER_LENGTH or s["en"] in seen or
                general_split(s) not in (None, "deeper") or not in_vocab(s, train_en, train_hi)):
            continue
        seen.add(s["en"])
        by_length[n].append(s)
    if any(len(by_length[n]) < LONG_PER_LENGTH for n in LONG_WORDS):
        sys.exit("make_idioms: could not draw enough long sentences")
    return [s for n in LONG_WORDS for s in by_length[n]]


def check_splits(splits, train_en, train_hi, max_en, max_hi):
    """Every rule the written splits keep, as a list of what breaks them (empty when none)."""
    errors = []
    seen = {}
    for name, rows in splits.items():
        for s in rows:
            for text, hindi in ((s["en"], False), (s["hi"], True)):
                problem = check_field(text, hindi)
                if problem:
                    errors.append(f"{name}: '{text}': {problem}")
            if s["en"] in seen:
                errors.append(f"'{s['en']}' is in {seen[s['en']]} and {name}")
            seen[s["en"]] = name
            if name != "train" and not in_vocab(s, train_en, train_hi):
                errors.append(f"{name}: '{s['en']}' has a word that train lacks")
            if len(s["en"].split()) > max_en or len(s["hi"].split()) > max_hi:
                errors.append(f"{name}: '{s['en']}' is longer than every train sentence")
    errors += [f"train holds a held-out combination: '{s['en']}'" for s in splits["train"] if general_split(s)]
    errors += [f"deeper: '{s['en']}' is not deeper than train" for s in splits["deeper"]
               if s["depth"] <= MAX_TRAIN_DEPTH]
    idioms = {s["feats"]["idiom"] for s in splits["idiom_context"]}
    senses = {s["feats"]["sense"] for s in splits["sense_context"]}
    if len(idioms) < 24:
        errors.append(f"idiom_context covers only {len(idioms)} idiom readings")
    if len(senses) < 10:
        print(sorted(senses), file=sys.stderr)
        errors.append(f"sense_context covers only {len(senses)} word senses")
    return errors


def main():
    out_dir, train_size = OUT_DIR, TRAIN_SIZE
    args = sys.argv[1:]
    while args:
        if len(args) >= 2 and args[0] == "--out":
            out_dir = args[1]
        elif len(args) >= 2 and args[0] == "--train-size" and args[1].isdigit() and 1000 <= int(args[1]) <= 500000:
            train_size = int(args[1])  # for experiments; the committed files use TRAIN_SIZE
        else:
            sys.exit("usage: python3 data/make_idioms.py [--out DIR] [--train-size N (1000 to 500000)]")
        args = args[2:]
    rng = random.Random(SEED)
    pools, by_english = draw_all(rng, train_size)
    iid = pools[None]
    for e in SHOWCASE:
        if e not in by_english:
            sys.exit(f"make_idioms: showcase sentence '{e}' was never drawn")
    missing = [e for e in SHOWCASE if general_split(by_english[e]) is not None]
    if missing:
        sys.exit(f"make_idioms: showcase sentences held out: {missing}")
    showcase = [by_english[e] for e in SHOWCASE]
    seed_phrases = [s for s in iid if s["frame"] == "bank_short" and s["en"] not in SHOWCASE]
    forced = {s["en"] for s in showcase + seed_phrases}
    rest = [s for s in iid if s["en"] not in forced]
    rng.shuffle(rest)
    train = showcase + seed_phrases + rest[:train_size - len(forced)]
    rest = rest[train_size - len(forced):]
    train_en = {w for s in train for w in s["en"].split()}
    train_hi = {w for s in train for w in s["hi"].split()}
    known = [s for s in rest if in_vocab(s, train_en, train_hi)]
    valid, test = known[:VALID_SIZE], known[VALID_SIZE:VALID_SIZE + TEST_SIZE]
    if len(test) < TEST_SIZE:
        sys.exit("make_idioms: not enough in-vocabulary sentences for valid and test")
    max_en = max(len(s["en"].split()) for s in train)
    max_hi = max(len(s["hi"].split()) for s in train)
    general = {k: choose_general(rng, pools[k], k, train_en, train_hi, max_en, max_hi) for k in SPLITS}
    rng.shuffle(train)

    splits = {"train": train, "valid": valid, "test": test, **general}
    errors = check_splits(splits, train_en, train_hi, max_en, max_hi)
    if errors:
        for e in errors[:20]:
            print("check failed:", e, file=sys.stderr)
        sys.exit(1)

    os.makedirs(out_dir, exist_ok=True)
    for name, rows in splits.items():
        write(os.path.join(out_dir, f"{name}.tsv"), rows)
    long_rows = draw_long(splits, train_en, train_hi)
    write(os.path.join(out_dir, os.pardir, "long.tsv"), long_rows)
    cues, dropped = cue_rows([(name, s) for name in ("sense_context", "idiom_context", "test") for s in splits[name]])
    write_cues(os.path.join(out_dir, "cues.tsv"), cues)
    print(f"cues.tsv: {len(cues)} sentences with a located cue; dropped: " +
          ", ".join(f"{k} {v}" for k, v in sorted(dropped.items())))
    print(f"sentences drawn (distinct English): {len(by_english)}")
    for name, rows in splits.items():
        print(f"{name:14s} {len(rows):6d} pairs")
    print(f"train tokens: {sum(len(s['en'].split()) for s in train)} English, "
          f"{sum(len(s['hi'].split()) for s in train)} Hindi")
    print(f"vocabulary (train): {len(train_en)} English, {len(train_hi)} Hindi words")
    print(f"longest train sentence: {max_en} English words, {max_hi} Hindi words")
    print(f"long.tsv (beside {os.path.basename(out_dir)}/): {len(long_rows)} pairs of "
          f"{LONG_WORDS.start}-{LONG_WORDS.stop - 1} English words")
    print("train depth (adjectives + adjuncts):", dict(sorted(Counter(s["depth"] for s in train).items())))
    print("deeper depth:", dict(sorted(Counter(s["depth"] for s in general["deeper"]).items())))
    print(f"plain transitive sub-grammar alone: {count_plain_transitive()} distinct English sentences")


if __name__ == "__main__":
    main()
