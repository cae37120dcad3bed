# data/frames/phrases.py — the pieces every clause is built from: the Draw that records a sentence's
# choices, noun phrases, places, events, times and the adjuncts that carry them, and the tense.
from grammar import (DRINK_ADJECTIVES, NAMES, NOUNS, PERSON_ADJECTIVES, PLACE_ADJECTIVES, PRONOUNS, SAME_PAST,
                     THING_ADJECTIVES, is_first_singular, is_third_singular, name, noun, np_en, np_hi, pron)


TENSES = ["hab", "past", "fut", "prog"]
POSSESSABLE = {"friend", "teacher", "doctor", "child"}  # people that "my" / "his" ... may own
PERSON_NOUNS = [k for k, v in NOUNS.items() if "person" in v[4]]
TASK_NOUNS = [k for k, v in NOUNS.items() if "task" in v[4]]
EVENT_NOUNS = [k for k, v in NOUNS.items() if "event" in v[4]]
SUBJECT_DETS_SG = ["the", "the", "the", "a", "this", "that", "my", "his", "her", "our", "their"]
SUBJECT_DETS_PL = ["the", "the", "this", "that", "my", "his", "her", "our", "their"]
OBJECT_DETS_SG = ["the", "a", "a", "this", "that"]
OBJECT_DETS_PL = ["the", None, None, "this", "that"]
MASS_DETS = [None, None, "the", "this", "that"]

# Simple time adverbs: english, hindi, tenses they go with.
SIMPLE_TIMES = {
    "today": (["today"], ["आज"], {"hab", "past", "fut", "prog"}),
    "yesterday": (["yesterday"], ["कल"], {"past"}),
    "tomorrow": (["tomorrow"], ["कल"], {"fut"}),
    "every_day": (["every", "day"], ["हर", "दिन"], {"hab"}),
    "now": (["now"], ["अभी"], {"prog"}),
    "morning": (["in", "the", "morning"], ["सुबह"], {"hab", "past", "fut", "prog"}),
    "evening": (["in", "the", "evening"], ["शाम", "को"], {"hab", "past", "fut", "prog"}),
    "night": (["at", "night"], ["रात", "को"], {"hab", "past", "fut", "prog"}),
}
GENERAL_PLACES = ["garden", "room", "kitchen", "market", "park", "house", "village", "city", "shop",
                  "office", "school", "door"]
PLACE_PREPOSITION = {"door": "at", "stadium": "at", "floor": "on", "table": "on", "carpet": "on", "party": "at", "wedding": "at", "meeting": "at",
                     "show": "at", "match": "at"}
EVENT_PLACES = ["party", "wedding", "meeting", "show", "match"]  # at the party -> पार्टी में
WATERS = ["river", "lake", "pond", "canal"]
NEAR_PLACES = GENERAL_PLACES + WATERS  # near the pond -> तालाब के पास
SURFACES = ["board", "wall", "door"]  # wrote a question on the board -> बोर्ड पर
SURFACE_OBJECTS = ["story", "question", "puzzle"]  # what is written or read on a surface
PLACE_POSTPOSITION = {"tree": "पर", "board": "पर", "wall": "पर", "door": "पर", "floor": "पर",
                      "table": "पर", "carpet": "पर", "stairs": "पर"}
# before the exam -> परीक्षा से पहले, after dinner -> रात के खाने के बाद; about and at are the idioms'
# (spilled the beans about the party -> पार्टी का राज़, broke the ice at the party -> पार्टी में)
EVENT_POSTPOSITIONS = {"before": ["से", "पहले"], "after": ["के", "बाद"], "about": ["का"], "at": ["में"]}


class Discard(Exception):
    """Raised where a draw hits a combination the grammar avoids; the frame then gives None."""


def discard_if(condition):
    if condition:
        raise Discard


class Draw:
    """One sentence under construction: its random source, its depth count and its choices."""

    def __init__(self, rng, frame):
        self.rng, self.frame, self.depth = rng, frame, 0
        self.feats = {"frame": frame}

    def pick(self, options):
        return options[self.rng.randrange(len(options))]

    def chance(self, p):
        return self.rng.random() < p

    def done(self, en, hi):
        return {"en": " ".join(en), "hi": " ".join(hi), "frame": self.frame, "depth": self.depth,
                "feats": self.feats}


# ---- noun phrases ------------------------------------------------------------------------------
def optional_adjective(d, pool, p):
    """[] or, with probability p, one adjective of the pool (one more level of depth)."""
    if pool and d.chance(p):
        d.depth += 1
        return [d.pick(pool)]
    return []


def np_key(np):
    return f"{np['kind']}:{np['key']}" + (f":{np['number']}" if np["kind"] == "noun" else "")


def note_role(d, np, role):
    """Records (role, noun) for every noun of np, conjuncts included: the lexical splits hold
    some nouns out of some roles (subj: the subject; obj: any other argument)."""
    if np["kind"] == "coord":
        for x in np["items"]:
            note_role(d, x, role)
    elif np["kind"] == "noun":
        d.feats.setdefault("roles", []).append((role, np["key"]))
    return np


def person_np(d, allow_pronoun=True, allow_possessive=True, adj_p=0.2, role="subj"):
    """A person: a pronoun, a name or a person noun phrase.  A subject is recorded by
    with_subject; role "obj" (any other argument) is recorded here."""
    r = d.rng.random()
    if allow_pronoun and r < 0.25:
        np = pron(d.pick(list(PRONOUNS)))
    elif r < 0.55:
        np = name(d.pick(list(NAMES)))
    else:
        number = "pl" if d.chance(0.3) else "sg"
        dets = SUBJECT_DETS_SG if number == "sg" else SUBJECT_DETS_PL
        key = d.pick(PERSON_NOUNS)
        if not allow_possessive or key not in POSSESSABLE:
            dets = [x for x in dets if x not in ("my", "his", "her", "our", "their")]
        adjs = optional_adjective(d, PERSON_ADJECTIVES, adj_p)
        np = noun(key, number, d.pick(dets), adjs)
    return note_role(d, np, role) if role != "subj" else np


def thing_np(d, kind, adj_p=0.2, extra_adjs=()):
    """A thing of the kind as an object: mass nouns take no "a" and no plural, and among the
    adjectives only a drink's (hot tea -> गर्म चाय, cold milk -> ठंडा दूध)."""
    key = d.pick([k for k, v in NOUNS.items() if kind in v[4]])
    if NOUNS[key][1] is None:
        adjs = optional_adjective(d, DRINK_ADJECTIVES if kind == "drink" else [], adj_p)
        return note_role(d, noun(key, "sg", d.pick(MASS_DETS), adjs), "obj")
    number = "pl" if d.chance(0.3) else "sg"
    det = d.pick(OBJECT_DETS_SG if number == "sg" else OBJECT_DETS_PL)
    adjs = optional_adjective(d, list(THING_ADJECTIVES) + list(extra_adjs), adj_p)
    return note_role(d, noun(key, number, det, adjs), "obj")


def place_words(key):
    """The preposition and postposition of a place: in the garden -> में, on the table -> पर."""
    return PLACE_PREPOSITION.get(key, "in"), PLACE_POSTPOSITION.get(key, "में")


def place_phrase(d, key, prep=None, adj_p=0.15, near=False):
    """in the garden -> बगीचे में (oblique); with an adjective: in the big garden -> बड़े बगीचे में;
    near the pond -> तालाब के पास (oblique + के पास)."""
    np = noun(key, "sg", "the", optional_adjective(d, [] if key == "tree" else PLACE_ADJECTIVES, adj_p))
    if near:
        return ["near"] + np_en(np), np_hi(np, oblique=True) + ["के", "पास"]
    default_prep, post = place_words(key)
    return [prep or default_prep] + np_en(np), np_hi(np, oblique=True) + [post]


def event_phrase(d, which=None, event=None):
    """before/after the X, or the idioms' about/at the X (EVENT_POSTPOSITIONS); records the event."""
    which = which or d.pick(["before", "after"])
    event = event or d.pick(EVENT_NOUNS)
    np = noun(event, "sg", None if event == "dinner" else "the")
    d.feats["event"] = event
    return [which] + np_en(np), np_hi(np, oblique=True) + EVENT_POSTPOSITIONS[which]


def time_phrase(d, tense, allowed=None):
    key = d.pick([k for k, v in SIMPLE_TIMES.items() if tense in v[2] and (allowed is None or k in allowed)])
    d.feats["time"] = key
    return SIMPLE_TIMES[key][:2]


def adjuncts(d, tense, place_keys=GENERAL_PLACES + EVENT_PLACES, place_p=0.3, time_p=0.35, event_p=0.15,
             near_p=0.3, coord_p=0.2):
    """Optional place, simple time and event adjuncts: (english after the verb phrase, hindi
    after the subject).  English: place event time; Hindi: time event place.  A place is "near
    the X" (any of NEAR_PLACES, the waters included) with probability near_p.  Outside the idiom
    and word-sense frames a place or an event may be two coordinated ones (coord_p): in the
    kitchen and the garden -> रसोई और बगीचे में, before the exam and the show -> परीक्षा और शो से पहले."""
    en, hi_time, hi_event, hi_place = [], [], [], []
    may_coord = "idiom" not in d.feats and "sense" not in d.feats
    if place_keys and d.chance(place_p):
        near = d.chance(near_p)
        keys = NEAR_PLACES if near else place_keys
        key = d.pick(keys)
        d.feats["place"] = key
        e, hi_place = place_phrase(d, key, near=near)
        same = []
        if may_coord and d.chance(coord_p):
            same = [k for k in keys if k != key and (near or place_words(k) == place_words(key))]
        if same:
            other = noun(d.pick(same))
            d.feats["place_also"] = other["key"]
            d.feats["coord"] = d.feats.get("coord", ()) + ("place",)
            cut = 2 if near else 1  # the postposition: के पास, or में/पर
            e = e + ["and"] + np_en(other)
            hi_place = hi_place[:-cut] + ["और"] + np_hi(other, oblique=True) + hi_place[-cut:]
        en += e
        d.depth += 1
    if d.chance(event_p):
        events = [x for x in EVENT_NOUNS if x not in (d.feats.get("place"), d.feats.get("place_also"))]
        e, hi_event = event_phrase(d, None, d.pick(events))
        if may_coord and d.chance(coord_p):
            other = noun(d.pick([x for x in events if x not in (d.feats["event"], "dinner")]))
            d.feats["coord"] = d.feats.get("coord", ()) + ("event",)
            e = e + ["and"] + np_en(other)
            hi_event = hi_event[:-2] + ["और"] + np_hi(other, oblique=True) + hi_event[-2:]
        en += e
        d.depth += 1
    if d.chance(time_p):
        e, hi_time = time_phrase(d, tense)
        en += e
        d.depth += 1
    return en, hi_time + hi_event + hi_place


def pick_tense(d, tenses=TENSES):
    tense = d.pick(tenses)
    d.feats["tense"] = tense
    return tense


def tense_and_negation(d, verb=None, tenses=None, negative_p=0.2):
    """Records the verb, then draws the tense (from tenses, by default those the verb takes) and
    whether the clause is negative (never when negative_p is 0): (tense, negative)."""
    if verb:
        d.feats["verb"] = verb
    return pick_tense(d, tenses or verb_tenses(verb)), negative_p > 0 and d.chance(negative_p)


def verb_tenses(verb):
    """The tenses a verb takes: no progressive of see, nor of spill (a compound)."""
    return [t for t in TENSES if not (t == "prog" and verb in ("see", "spill"))]


def copula_tenses(subj_agr):
    """The tenses of a copula: no future with the subject i."""
    return ["hab", "past"] + ([] if is_first_singular(subj_agr) else ["fut"])


def same_past_clash(verb, tense, negative, subj_agr):
    """read/hit/let/cost: the positive habitual of a non-3rd-singular subject looks like the past."""
    return verb in SAME_PAST and tense == "hab" and not negative and not is_third_singular(subj_agr)


def with_subject(d, subj):
    """Records the subject: its key, its noun (the idiom splits hold some out) and its role."""
    d.feats["subj"] = np_key(subj) if subj["kind"] != "coord" else "coord"
    note_role(d, subj, "subj")
    if subj["kind"] == "noun":
        d.feats["subj_noun"] = subj["key"]
    return subj
