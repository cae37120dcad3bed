# data/rule_usage.py — counts, for each numbered rule of data/README.md, the train pairs that use it,
# read from the text of the pairs alone (an outside view: it does not ask the generator).
"""Run from the repository root:  python3 data/rule_usage.py [data/idioms/train.tsv]

Prints the table of data/README.md's "How often train uses each rule" (tests/test_grammar.py checks
the two agree). Each detector looks for the words only its rule writes; a pair counts once per rule."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from grammar import ADJECTIVES  # noqa: E402

ADJECTIVE_WORDS = {"old" if k == "old_thing" else k for k in ADJECTIVES}
POSSESSIVE_WORDS = {"my", "his", "her", "our", "their"}
ERGATIVE = {"ने", "मैंने", "हमने", "उसने", "उन्होंने"}
DATIVE_PRONOUNS = {"मुझे", "हमें", "उसे", "उन्हें"}
POSTPOSITIONS = {"ने", "को", "का", "के", "की", "में", "पर", "से", "लिए"}
EVENTS = {"party", "wedding", "meeting", "show", "match", "exam", "dinner", "interview", "test", "movie", "class"}
TIMES = {"today", "yesterday", "tomorrow", "now", "morning", "evening", "night", "every"}
MOTION = {"go", "goes", "went", "going", "come", "comes", "came", "coming"}
NON_PERSON_SUBJECTS = {"cat", "cats", "snake", "snakes", "mouse", "mice", "bat", "bats", "shop", "shops", "school",
                       "schools", "office", "offices", "market", "markets", "door", "doors", "bank", "banks",
                       "river", "rivers", "canal", "canals", "water", "moon", "tree", "trees", "watch", "watches",
                       "car", "cars", "tea", "milk", "juice", "coffee", "ice", "garden", "room", "house", "city",
                       "village", "park", "kitchen", "book", "books", "bag", "bags", "box", "boxes"}
DETERMINERS = {"the", "a", "an", "this", "that", "these", "those", "my", "his", "her", "our", "their"}
COPULA_HI = {"है", "हैं", "था", "थे", "थी", "थीं", "होगा", "होगी", "होंगे", "होंगी"}
PLAIN_SENSE = [("moon", "चाँद"), ("cake", "केक"), ("beans", "फलियाँ"), ("sack", "बोरा"), ("sack", "बोरे"),
               ("ice", "बर्फ़"), ("cat", "बिल्ली"), ("cats", "बिल्लियाँ")]


def subject_word(en):
    """The head of a simple subject: the first word after the determiners and one adjective."""
    words = [w for w in en if w not in DETERMINERS]
    if words and words[0] in ADJECTIVE_WORDS and len(words) > 1:
        return words[1]
    return words[0] if words else ""


def marked_object(hi):
    return any(w == "को" and (i == 0 or hi[i - 1] not in ("शाम", "रात")) for i, w in enumerate(hi)) or \
        bool(set(hi) & DATIVE_PRONOUNS)


def rules_of(en_text, hi_text):
    """The set of rule labels (as in the table) that one English-Hindi pair uses."""
    en, hi = en_text.split(), hi_text.split()
    e, h = set(en), set(hi)
    non_person = subject_word(en) in NON_PERSON_SUBJECTS
    found = {"1", "2"}  # every pair has a finite verb, and its stem's ending
    checks = {
        "3": bool(h & ERGATIVE),
        "4": marked_object(hi),
        "5": bool(h & POSTPOSITIONS) or bool(h & ERGATIVE) or bool(h & DATIVE_PRONOUNS),
        "6": bool(e & (ADJECTIVE_WORDS | POSSESSIVE_WORDS)),
        "7": "नहीं" in h,
        "8 meet": bool(e & {"meet", "meets", "met", "meeting"}) and any(w.startswith("मिल") for w in hi),
        "8 flow, grow, shine": any(w.startswith(s) for w in hi for s in ("बह", "बढ़", "चमक")),
        "9": bool(e & MOTION) or "near" in e,
        "10": bool(e & EVENTS),
        "11": bool(e & TIMES),
        "12": bool(e & {"read", "hit", "let", "cost"}),
        "13": non_person,
        "14 hit X with Y": bool(e & {"hit", "hits", "hitting"}) and "with" in e,
        "14 break": bool(e & {"break", "breaks", "broke", "breaking"}) and "ice" not in e and "leg" not in e,
        "14 spill": bool(e & {"spill", "spills", "spilled", "spilling"}) and "beans" not in e,
        "14 keep X in Y": bool(e & {"keep", "keeps", "kept", "keeping"}),
        "15": "and" in e and "और" in h,
        "16": "for" in e and "लिए" in h,
        "17": bool(h & {"अपना", "अपने", "अपनी"}),
        "17 with i, we or they": en[0] in ("i", "we", "they") and bool(h & {"अपना", "अपने", "अपनी"}),
        "18": bool(e & {"quickly", "carefully", "gently"}),
        "19": non_person and hi[-1] in COPULA_HI and bool(e & {"is", "are", "was", "were", "be"}),
        "20": any(w in e and x in h for w, x in PLAIN_SENSE),
        "21": "with" in e and "साथ" in h,
    }
    return found | {k for k, v in checks.items() if v}


RULE_NAMES = {
    "1": "agreement of the verb", "2": "stems", "3": "the ergative", "4": "marked objects (को)",
    "5": "the oblique case", "6": "adjectives and possessives", "7": "negation",
    "8 meet": "मिलना (meet) with से", "8 flow, grow, shine": "flow, grow and shine",
    "9": "motion and places (go/come to, near)", "10": "events", "11": "times",
    "12": "read, hit, let, cost", "13": "animals and things as subjects",
    "14 hit X with Y": "hit X with Y", "14 break": "break X", "14 spill": "spill X (drinks)",
    "14 keep X in Y": "keep X in Y", "15": "coordination", "16": "beneficiaries (for X)", "17": "अपना",
    "17 with i, we or they": "अपना after i, we or they", "18": "manner", "19": "copulas with things and animals",
    "20": "the idioms' words in their plain sense", "21": "company (with X)",
}
MINIMUM = 500  # pairs each rule (and each of its parts: 8, 14) must have in train
BREAKDOWN = {"17 with i, we or they"}  # rows that show part of a rule's count, not held to MINIMUM


def count(path):
    counts = {k: 0 for k in RULE_NAMES}
    with open(path, encoding="utf-8") as f:
        for line in f:
            en, hi = line.rstrip("\n").split("\t")
            for rule in rules_of(en, hi):
                counts[rule] += 1
    return counts


def table(counts):
    rows = ["| rule | what | train pairs |", "|---|---|---|"]
    for key, what in RULE_NAMES.items():
        rows.append(f"| {key.split(' ')[0]} | {what} | {counts[key]:,} |")
    return "\n".join(rows)


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                             "idioms", "train.tsv")
    print(table(count(path)))


if __name__ == "__main__":
    main()
