# data/frames.py — the clause types of the corpus (plain clauses, the 12 idioms in both readings,
# the 5 ambiguous words), each drawn from a random.Random and realised through data/grammar.py.
# Every draw returns the English, the Hindi and the choices that data/make_idioms.py's splits use.
from grammar import (NOUNS, NAMES, PRONOUNS, DEFAULT_AGR, PERSON_ADJECTIVES, THING_ADJECTIVES, DRINK_ADJECTIVES,
                     coord, refers_to_subject, en_agr,
                     PLACE_ADJECTIVES, PREDICATE_ADJECTIVES, THING_PREDICATE_ADJECTIVES,
                     SAME_PAST, VERBS, noun, name, pron, np_agr, np_en, np_hi, subject_hi, dative_hi,
                     genitive_hi, for_hi, verb_hi, verb_en, be_en, copula_hi, compound_hi,
                     is_third_singular, adj_en, adj_hi, future_hi, perfective_hi)

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
    np = _person_np(d, allow_pronoun, allow_possessive, adj_p)
    return note_role(d, np, role) if role != "subj" else np


def _person_np(d, allow_pronoun, allow_possessive, adj_p):
    r = d.rng.random()
    if allow_pronoun and r < 0.25:
        return pron(d.pick(list(PRONOUNS)))
    if r < 0.55:
        return name(d.pick(list(NAMES)))
    number = "pl" if d.chance(0.3) else "sg"
    dets = SUBJECT_DETS_SG if number == "sg" else SUBJECT_DETS_PL
    key = d.pick(PERSON_NOUNS)
    if not allow_possessive or key not in POSSESSABLE:
        dets = [x for x in dets if x not in ("my", "his", "her", "our", "their")]
    adjs = []
    if d.chance(adj_p):
        adjs.append(d.pick(PERSON_ADJECTIVES))
        d.depth += 1
    return noun(key, number, d.pick(dets), adjs)


def object_pronoun_np(d):
    return pron(d.pick(list(PRONOUNS)))


def thing_np(d, kind, adj_p=0.2, extra_adjs=()):
    return note_role(d, _thing_np(d, kind, adj_p, extra_adjs), "obj")


def _thing_np(d, kind, adj_p, extra_adjs):
    key = d.pick([k for k, v in NOUNS.items() if kind in v[4]])
    entry = NOUNS[key]
    mass = entry[1] is None
    if mass:  # hot tea -> गर्म चाय, cold milk -> ठंडा दूध
        adjs = []
        if kind == "drink" and d.chance(adj_p):
            adjs.append(d.pick(DRINK_ADJECTIVES))
            d.depth += 1
        return noun(key, "sg", d.pick(MASS_DETS), adjs)
    number = "pl" if d.chance(0.3) else "sg"
    det = d.pick(OBJECT_DETS_SG if number == "sg" else OBJECT_DETS_PL)
    adjs = []
    if d.chance(adj_p):
        adjs.append(d.pick(list(THING_ADJECTIVES) + list(extra_adjs)))
        d.depth += 1
    return noun(key, number, det, adjs)


def place_phrase(d, key, prep=None, adj_p=0.15, near=False):
    """in the garden -> बगीचे में (oblique); with an adjective: in the big garden -> बड़े बगीचे में;
    near the pond -> तालाब के पास (oblique + के पास)."""
    adjs = []
    if key not in ("tree",) and d.chance(adj_p):
        adjs.append(d.pick(PLACE_ADJECTIVES))
        d.depth += 1
    np = noun(key, "sg", "the", adjs)
    if near:
        return ["near"] + np_en(np), np_hi(np, oblique=True) + ["के", "पास"]
    prep = prep or PLACE_PREPOSITION.get(key, "in")
    post = PLACE_POSTPOSITION.get(key, "में")
    return [prep] + np_en(np), np_hi(np, oblique=True) + [post]


def event_phrase(d, which=None, event=None):
    which = which or d.pick(["before", "after"])
    event = event or d.pick(EVENT_NOUNS)
    np = noun(event, "sg", None if event == "dinner" else "the")
    post = ["से", "पहले"] if which == "before" else ["के", "बाद"]
    d.feats["event"] = event
    return [which] + np_en(np), np_hi(np, oblique=True) + post


def time_phrase(d, tense, allowed=None):
    keys = [k for k, v in SIMPLE_TIMES.items() if tense in v[2] and (allowed is None or k in allowed)]
    key = d.pick(keys)
    d.feats["time"] = key
    return SIMPLE_TIMES[key][0], SIMPLE_TIMES[key][1]


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
        e, h = place_phrase(d, key, near=near)
        same = []
        if may_coord and d.chance(coord_p):
            same = [k for k in keys if k != key and (near or (PLACE_PREPOSITION.get(k, "in"), PLACE_POSTPOSITION.get(k, "में")) ==
                                                   (PLACE_PREPOSITION.get(key, "in"), PLACE_POSTPOSITION.get(key, "में")))]
        if same:
            other = noun(d.pick(same))
            d.feats["place_also"] = other["key"]
            d.feats["coord"] = d.feats.get("coord", ()) + ("place",)
            cut = 2 if near else 1  # the postposition: के पास, or में/पर
            e, h = e + ["and"] + np_en(other), h[:-cut] + ["और"] + np_hi(other, oblique=True) + h[-cut:]
        en += e
        hi_place = h
        d.depth += 1
    if d.chance(event_p):
        e, h = event_phrase(d, None, d.pick([x for x in EVENT_NOUNS if x not in (d.feats.get("place"), d.feats.get("place_also"))]))
        if may_coord and d.chance(coord_p):
            other = noun(d.pick([x for x in EVENT_NOUNS if x not in (d.feats["event"], d.feats.get("place"),
                                                                     d.feats.get("place_also"), "dinner")]))
            d.feats["coord"] = d.feats.get("coord", ()) + ("event",)
            e, h = e + ["and"] + np_en(other), h[:-2] + ["और"] + np_hi(other, oblique=True) + h[-2:]
        en += e
        hi_event = h
        d.depth += 1
    if d.chance(time_p):
        e, h = time_phrase(d, tense)
        en += e
        hi_time = h
        d.depth += 1
    return en, hi_time + hi_event + hi_place


def pick_tense(d, tenses=TENSES, verb=None, subj=None):
    tense = d.pick(tenses)
    d.feats["tense"] = tense
    return tense


def same_past_clash(verb, tense, negative, subj_agr):
    """read/hit/let/cost: the positive habitual of a non-3rd-singular subject looks like the past."""
    return verb in SAME_PAST and tense == "hab" and not negative and not is_third_singular(subj_agr)


def with_subject(d, subj):
    d.feats["subj"] = np_key(subj) if subj["kind"] != "coord" else "coord"
    note_role(d, subj, "subj")
    return subj


# ---- plain clauses -----------------------------------------------------------------------------
TRANSITIVE = {"eat": "food", "drink": "drink", "read": "read", "write": "write", "buy": "thing",
              "see": "thing", "cook": "cook", "wash": "wash"}


def transitive_clause(d, verb, obj_en, obj_hi, obj_agr, tense, negative, subj, adj_en_hi,
                      marked_object=False, extra_en=(), extra_hi=(), before_object_hi=()):
    """S V O [adjuncts] -> S(ने in the past) [adjuncts] [बहुत कम] O [नहीं] V.
    The perfective agrees with an unmarked object; a को-object leaves it masculine singular."""
    stem, cls = VERBS[verb][1], VERBS[verb][2]
    s_agr = np_agr(subj)
    if tense == "past":
        v_agr = DEFAULT_AGR if marked_object else obj_agr
        hi_subj = subject_hi(subj, ergative=True)
    else:
        v_agr = s_agr
        hi_subj = subject_hi(subj, ergative=False)
    en = np_en(subj) + verb_en(verb, tense, negative, s_agr) + obj_en + list(extra_en) + adj_en_hi[0]
    hi = hi_subj + adj_en_hi[1] + list(before_object_hi) + obj_hi + list(extra_hi) + verb_hi(stem, cls, tense, negative, v_agr)
    return en, hi


def plain_transitive(d):
    verb = d.pick(list(TRANSITIVE))
    subj = with_subject(d, person_np(d))
    tenses = [t for t in TENSES if not (verb == "see" and t == "prog")]
    tense = pick_tense(d, tenses)
    negative = d.chance(0.2)
    if same_past_clash(verb, tense, negative, np_agr(subj)):
        return None
    obj = thing_np(d, TRANSITIVE[verb], adj_p=0.25,
                   extra_adjs=("heavy", "light", "light") if verb in ("buy", "see") else ())
    if "light" in obj["adjs"]:
        d.feats["sense"] = ("light", "weight")
        d.feats["cue"] = obj["key"]
    d.feats["verb"] = verb
    d.feats["object"] = obj["key"]
    blue_moon = tense == "hab" and not negative and d.chance(0.12)  # once in a blue moon
    adj = adjuncts(d, tense)
    if verb in ("write", "read") and obj["key"] in SURFACE_OBJECTS and "place" not in d.feats and d.chance(0.4):
        # wrote a question on the board -> ... बोर्ड पर एक सवाल लिखा (after time and event in Hindi)
        key = d.pick(SURFACES)
        d.feats["place"] = key
        d.depth += 1
        adj = (["on", "the", key] + adj[0], adj[1] + np_hi(noun(key), oblique=True) + ["पर"])
    extra_en, before_hi = [], []
    if blue_moon:  # once in a blue moon -> बहुत कम (idiomatic, "rarely"), after the object
        d.feats["idiom"] = ("blue_moon", "idiom")
        extra_en, before_hi = ["once", "in", "a", "blue", "moon"], ["बहुत", "कम"]
        d.depth += 1
    en, hi = transitive_clause(d, verb, np_en(obj, "obj"), np_hi(obj), np_agr(obj), tense, negative,
                               subj, (adj[0] + extra_en, adj[1]), extra_hi=before_hi)
    return d.done(en, hi)


def person_object(d):
    """see/call a person: रवि ने प्रिया को देखा (को-object, the verb stays masculine singular)."""
    verb = d.pick(["see", "call"])
    subj = with_subject(d, person_np(d))
    other = coordinated(d, "person", "person", "obj") if d.chance(0.2) else person_np(d, role="obj", allow_possessive=False)
    if other is None or not distinct(subj, other):
        return None
    record_pair(d, subj, other)
    other = reflexive(other, subj)  # a coordinated object may hold a possessive: we saw our friends -> अपने दोस्तों
    tenses = [t for t in TENSES if not (verb == "see" and t == "prog")]
    tense = pick_tense(d, tenses)
    negative = d.chance(0.2)
    d.feats["verb"] = verb
    adj = adjuncts(d, tense)
    en, hi = transitive_clause(d, verb, np_en(other, "obj"), dative_hi(other), DEFAULT_AGR, tense,
                               negative, subj, adj, marked_object=True)
    return d.done(en, hi)


PRONOUN_SE = {"i": "मुझसे", "we": "हमसे", "he": "उससे", "she": "उससे", "they": "उनसे"}


def meet(d):
    """meet X -> X से मिलना: intransitive in Hindi, so the verb agrees with the subject, no ने."""
    subj = with_subject(d, person_np(d))
    other = coordinated(d, "person", "person", "obj") if d.chance(0.2) else person_np(d, role="obj", allow_possessive=False)
    if other is None or not distinct(subj, other):
        return None
    record_pair(d, subj, other)
    other = reflexive(other, subj)  # we meet our friend and amit -> हम अपने दोस्त और अमित से मिलते हैं
    tense = pick_tense(d)
    negative = d.chance(0.2)
    d.feats["verb"] = "meet"
    adj = adjuncts(d, tense)
    other_hi = [PRONOUN_SE[other["key"]]] if other["kind"] == "pron" else np_hi(other, oblique=True) + ["से"]
    s_agr = np_agr(subj)
    en = np_en(subj) + verb_en("meet", tense, negative, s_agr) + np_en(other, "obj") + adj[0]
    hi = subject_hi(subj, False) + adj[1] + other_hi + verb_hi("मिल", "c", tense, negative, s_agr)
    return d.done(en, hi)


def conjuncts(np):
    return np["items"] if np["kind"] == "coord" else [np]


def record_pair(d, subj, other):
    """Names acting on names (conjuncts included): role_swap holds some ordered pairs out."""
    for a in conjuncts(subj):
        for b in conjuncts(other):
            if a["kind"] == "name" and b["kind"] == "name":
                d.feats.setdefault("pair", (a["key"], b["key"]))
                d.feats.setdefault("pairs", []).append((a["key"], b["key"]))


def ditransitive(d):
    """give/send/show O to X -> X को O देना (ने in the past; the verb agrees with O)."""
    verb = d.pick(["give", "send", "show"])
    subj = with_subject(d, person_np(d))
    recipient = person_np(d, role="obj", allow_possessive=False)
    if np_key(recipient) == np_key(subj) or (recipient["kind"] == "pron" and subj["kind"] == "pron"):
        return None
    record_pair(d, subj, recipient)
    tense = pick_tense(d)
    negative = d.chance(0.2)
    d.feats["verb"] = verb
    if d.chance(0.12):  # a piece of cake, literally
        obj_en, obj_hi, obj_agr = ["a", "piece", "of", "cake"], ["केक", "का", "एक", "टुकड़ा"], DEFAULT_AGR
        d.feats["idiom"] = ("cake", "literal")
    else:
        obj = noun("money", "sg", d.pick([None, "the"])) if d.chance(0.1) else thing_np(d, "thing")
        obj_en, obj_hi, obj_agr = np_en(obj, "obj"), np_hi(obj), np_agr(obj)
        d.feats["object"] = obj["key"]
    adj = adjuncts(d, tense)
    en_adj = ["to"] + np_en(recipient, "obj") + adj[0]
    en, hi = transitive_clause(d, verb, obj_en, obj_hi, obj_agr, tense, negative, subj,
                               (en_adj, adj[1] + dative_hi(recipient)))
    return d.done(en, hi)


INTRANSITIVE = ["sleep", "laugh", "dance", "run", "swim", "cry"]


def intransitive(d):
    """Intransitive verbs agree with the subject in every tense (वह सोया, लड़कियाँ सोईं)."""
    verb = d.pick(INTRANSITIVE + ["go", "come"] * 2)
    subj = with_subject(d, person_np(d))
    tense = pick_tense(d)
    negative = d.chance(0.2)
    d.feats["verb"] = verb
    s_agr = np_agr(subj)
    stem, cls = VERBS[verb][1], VERBS[verb][2]
    dest_en, dest_hi = [], []
    if verb in ("go", "come"):  # to the market -> बाज़ार (no postposition); home -> घर
        if d.chance(0.2):
            dest_en, dest_hi = ["home"], ["घर"]
        else:  # to the market -> बाज़ार; to school (no article) -> स्कूल; to the bank -> बैंक (money)
            key = d.pick([k for k, v in NOUNS.items() if "destination" in v[4]] + ["bank_money"])
            np = noun(key, "sg", None if key == "school" else "the")
            if key != "bank_money" and d.chance(0.25):  # to the market and the park -> बाज़ार और पार्क
                other = d.pick([k for k, v in NOUNS.items() if "destination" in v[4] and k != key])
                np = coord(np, noun(other, "sg", None if other == "school" else "the"))
                d.feats["coord"] = d.feats.get("coord", ()) + ("destination",)
            dest_en, dest_hi = ["to"] + np_en(np), np_hi(np)
            d.feats["place"] = key
            if key == "bank_money":
                d.feats["sense"] = ("bank", "money")
                d.feats["cue"] = "go"
        adj = adjuncts(d, tense, place_keys=None)
    elif verb == "swim":
        key = d.pick(["river", "lake", "pond", "canal"])
        d.feats["place"] = key
        e, h = place_phrase(d, key, adj_p=0)
        adj = adjuncts(d, tense, place_keys=None)
        adj = (e + adj[0], adj[1] + h)
    else:
        adj = adjuncts(d, tense)
    en = np_en(subj) + verb_en(verb, tense, negative, s_agr) + dest_en + adj[0]
    hi = subject_hi(subj, False) + adj[1] + dest_hi + verb_hi(stem, cls, tense, negative, s_agr)
    return d.done(en, hi)


def copula_person(d):
    subj = with_subject(d, person_np(d))
    s_agr = np_agr(subj)
    tenses = ["hab", "past"] + ([] if s_agr[2] == 1 and s_agr[1] == "sg" else ["fut"])
    tense = pick_tense(d, tenses)
    negative = d.chance(0.25)
    adjective = d.pick(PREDICATE_ADJECTIVES)
    d.feats["verb"] = "be"
    adj = adjuncts(d, tense, place_keys=None, time_p=0.4, event_p=0.15)
    en = np_en(subj) + be_en(tense, negative, s_agr) + [adjective] + adj[0]
    hi = subject_hi(subj, False) + adj[1] + [adj_hi(adjective, s_agr, False)] + (["नहीं"] if negative else []) + copula_hi(tense, s_agr)
    return d.done(en, hi)


def copula_thing(d):
    """the bag is light -> थैला हल्का है (light: the weight sense); adjectives agree."""
    key = d.pick([k for k, v in NOUNS.items() if "thing" in v[4]])
    number = "pl" if d.chance(0.3) else "sg"
    subj = noun(key, number, d.pick(SUBJECT_DETS_SG if number == "sg" else SUBJECT_DETS_PL))
    with_subject(d, subj)
    s_agr = np_agr(subj)
    tense = pick_tense(d, ["hab", "past", "fut"])
    negative = d.chance(0.2)
    adjective = d.pick(THING_PREDICATE_ADJECTIVES)
    if adjective == "light":
        d.feats["sense"] = ("light", "weight")
        d.feats["cue"] = key
    adj = adjuncts(d, tense, place_keys=None, time_p=0.3, event_p=0)
    en = np_en(subj) + be_en(tense, negative, s_agr) + [adjective] + adj[0]
    hi = subject_hi(subj, False) + adj[1] + [adj_hi(adjective, s_agr, False)] + (["नहीं"] if negative else []) + copula_hi(tense, s_agr)
    return d.done(en, hi)


# ---- the 12 idioms, each with an idiomatic and a literal reading -------------------------------
def idiom(d, key, reading):
    d.feats["idiom"] = (key, reading)


def cue(d, value):
    d.feats["cue"] = value
    d.depth += 1


def subject_feats(d, subj):
    with_subject(d, subj)
    if subj["kind"] == "noun":
        d.feats["subj_noun"] = subj["key"]
    return subj


def optional_time(d, tense, p=0.3):
    if d.chance(p):
        d.depth += 1
        return time_phrase(d, tense)
    return [], []


def optional_event(d, p=0.3, which=None, events=None):
    if d.chance(p):
        d.depth += 1
        return event_phrase(d, which, d.pick(events) if events else None)
    return [], []


def ergative_if(subj, tense):
    return subject_hi(subj, ergative=(tense == "past"))


def verb_agr(subj, tense, object_agr):
    """The agreement controller: the object in the perfective (subject has ने), else the subject."""
    return object_agr if tense == "past" else np_agr(subj)


def cake_idiom(d):
    """the exam was a piece of cake [for X] -> परीक्षा [X के लिए] बहुत आसान थी"""
    idiom(d, "cake", "idiom")
    task = d.pick(TASK_NOUNS)
    subj = subject_feats(d, noun(task, "sg", d.pick(["the", "the", "this", "that", "my", "his", "her", "our", "their"])))
    agr = np_agr(subj)
    tense = pick_tense(d, ["hab", "past", "fut"])
    negative = d.chance(0.2)
    en_for, hi_for = [], []
    if d.chance(0.35):
        who = person_np(d, role="obj", adj_p=0.1)
        en_for, hi_for = ["for"] + np_en(who, "obj"), for_hi(who)
        d.feats["for"] = np_key(who)
        d.depth += 1
    t_en, t_hi = optional_time(d, tense, 0.25)
    en = np_en(subj) + be_en(tense, negative, agr) + ["a", "piece", "of", "cake"] + en_for + t_en
    hi = np_hi(subj) + t_hi + hi_for + ["बहुत", "आसान"] + (["नहीं"] if negative else []) + copula_hi(tense, agr)
    return d.done(en, hi)


def cake_literal(d):
    """she ate a piece of cake -> उसने केक का एक टुकड़ा खाया (टुकड़ा: masculine singular)"""
    idiom(d, "cake", "literal")
    verb = d.pick(["eat", "buy", "see", "eat"])
    subj = subject_feats(d, person_np(d))
    tense = pick_tense(d, [t for t in TENSES if not (verb == "see" and t == "prog")])
    negative = d.chance(0.2)
    d.feats["verb"] = verb
    adj = adjuncts(d, tense, place_p=0.25, time_p=0.3, event_p=0.1)
    en, hi = transitive_clause(d, verb, ["a", "piece", "of", "cake"], ["केक", "का", "एक", "टुकड़ा"],
                               DEFAULT_AGR, tense, negative, subj, adj)
    return d.done(en, hi)


def leg_idiom(d):
    """X said break a leg to Y -> X ने Y को शुभकामनाएँ दीं (शुभकामनाएँ: feminine plural)"""
    idiom(d, "leg", "idiom")
    subj = subject_feats(d, person_np(d))
    tense = pick_tense(d, ["past", "past", "fut", "hab"])
    negative = d.chance(0.15)
    if same_past_clash("say", tense, negative, np_agr(subj)):
        return None
    en_to, hi_to = [], []
    if d.chance(0.5):
        who = person_np(d, role="obj", allow_possessive=False, adj_p=0.1)
        if np_key(who) == np_key(subj) or (who["kind"] == "pron" and subj["kind"] == "pron"):
            return None
        record_pair(d, subj, who)
        en_to, hi_to = ["to"] + np_en(who, "obj"), dative_hi(who)
    e_en, e_hi = optional_event(d, 0.5, which="before")
    t_en, t_hi = optional_time(d, tense, 0.2)
    f_agr = ("f", "pl", 3)
    en = np_en(subj) + verb_en("say", tense, negative, np_agr(subj)) + ["break", "a", "leg"] + en_to + e_en + t_en
    hi = ergative_if(subj, tense) + t_hi + e_hi + hi_to + ["शुभकामनाएँ"] + verb_hi("दे", "de", tense, negative, verb_agr(subj, tense, f_agr))
    return d.done(en, hi)


def leg_literal(d):
    """he broke a leg on the stairs -> उसकी टांग सीढ़ियों पर टूट गई (the leg is the subject)"""
    idiom(d, "leg", "literal")
    subj = person_np(d)
    if np_agr(subj)[1] != "sg":
        return None
    subject_feats(d, subj)
    tense = pick_tense(d, ["past", "past", "fut"])
    negative = d.chance(0.15)
    leg = ("f", "sg", 3)
    p_en, p_hi = [], []
    if d.chance(0.5):
        key = d.pick(["stairs", "accident", "match", "park", "garden"])
        d.feats["place"] = key
        if key == "stairs":
            p_en, p_hi = ["on", "the", "stairs"], ["सीढ़ियों", "पर"]
            d.depth += 1
        else:
            p_en, p_hi = place_phrase(d, key, adj_p=0.0)
            d.depth += 1
    e_en, e_hi = optional_event(d, 0.2, which="before")
    t_en, t_hi = optional_time(d, tense, 0.2)
    if negative:
        v_hi = ["नहीं", perfective_hi("टूट", "c", leg) if tense == "past" else future_hi("टूट", "c", leg)]
    else:
        v_hi = compound_hi("टूट", "जा", "ja", tense, leg)
    en = np_en(subj) + verb_en("break", tense, negative, np_agr(subj)) + ["a", "leg"] + p_en + e_en + t_en
    hi = genitive_hi(subj, leg) + ["टांग"] + t_hi + e_hi + p_hi + v_hi
    return d.done(en, hi)


def spill_idiom(d):
    """he spilled the beans [about the party] -> उसने [पार्टी का] राज़ खोल दिया"""
    idiom(d, "spill", "idiom")
    subj = subject_feats(d, person_np(d))
    tense = pick_tense(d, ["past", "past", "fut", "hab"])
    a_en, a_hi = [], []
    if d.chance(0.5):
        event = d.pick(EVENT_NOUNS)
        d.feats["event"] = event
        ev = noun(event, "sg", None if event == "dinner" else "the")
        a_en, a_hi = ["about"] + np_en(ev), np_hi(ev, oblique=True) + ["का"]
        d.depth += 1
    t_en, t_hi = optional_time(d, tense, 0.3)
    m_agr = verb_agr(subj, tense, DEFAULT_AGR)
    en = np_en(subj) + verb_en("spill", tense, False, np_agr(subj)) + ["the", "beans"] + a_en + t_en
    hi = ergative_if(subj, tense) + t_hi + a_hi + ["राज़", "खोल"] + verb_hi("दे", "de", tense, False, m_agr)
    return d.done(en, hi)


def spill_literal(d):
    """he spilled the beans on the floor -> उसने फ़र्श पर फलियाँ गिरा दीं (फलियाँ: f pl)"""
    idiom(d, "spill", "literal")
    subj = subject_feats(d, person_np(d))
    tense = pick_tense(d, ["past", "past", "fut", "hab"])
    key = d.pick(["floor", "table", "carpet", "floor", "kitchen", "room", "garden", "park"])
    d.feats["place"] = key
    d.feats["cue"] = key
    prep = "on" if key in ("floor", "table", "carpet") else "in"
    p_en, p_hi = place_phrase(d, key, prep, adj_p=0.1)
    d.depth += 1
    t_en, t_hi = optional_time(d, tense, 0.3)
    en = np_en(subj) + verb_en("spill", tense, False, np_agr(subj)) + ["the", "beans"] + p_en + t_en
    hi = ergative_if(subj, tense) + t_hi + p_hi + ["फलियाँ", "गिरा"] + verb_hi("दे", "de", tense, False, verb_agr(subj, tense, ("f", "pl", 3)))
    return d.done(en, hi)


def feet_idiom(d):
    """she got cold feet before the wedding -> वह शादी से पहले घबरा गई (agrees with the subject)"""
    idiom(d, "feet", "idiom")
    subj = subject_feats(d, person_np(d))
    tense = pick_tense(d, ["past", "past", "fut", "hab"])
    e_en, e_hi = optional_event(d, 0.55, which="before")
    t_en, t_hi = optional_time(d, tense, 0.25)
    en = np_en(subj) + verb_en("get", tense, False, np_agr(subj)) + ["cold", "feet"] + e_en + t_en
    hi = subject_hi(subj, False) + t_hi + e_hi + compound_hi("घबरा", "जा", "ja", tense, np_agr(subj))
    return d.done(en, hi)


def feet_literal(d):
    """she got cold feet in the snow -> उसके पैर बर्फ़ में ठंडे हो गए (पैर: masculine plural)"""
    idiom(d, "feet", "literal")
    subj = subject_feats(d, person_np(d))
    tense = pick_tense(d, ["past", "past", "fut", "hab"])
    key = d.pick(["snow", "rain", "winter", "river", "lake", "pond", "canal", "snow"])
    d.feats["place"] = key
    d.feats["cue"] = key
    if key in ("snow", "rain", "winter"):
        p_en, p_hi = ["in", "the", key], [{"snow": "बर्फ़", "rain": "बारिश", "winter": "सर्दी"}[key], "में"]
    else:
        p_en, p_hi = place_phrase(d, key, adj_p=0.0)
    d.depth += 1
    t_en, t_hi = optional_time(d, tense, 0.25)
    feet = ("m", "pl", 3)
    en = np_en(subj) + verb_en("get", tense, False, np_agr(subj)) + ["cold", "feet"] + p_en + t_en
    hi = genitive_hi(subj, feet) + ["पैर"] + t_hi + p_hi + ["ठंडे"] + compound_hi("हो", "जा", "ja", tense, feet)
    return d.done(en, hi)


def weather_idiom(d):
    """he is under the weather today -> उसकी तबीयत आज ठीक नहीं है (तबीयत: feminine)"""
    idiom(d, "weather", "idiom")
    subj = subject_feats(d, person_np(d))
    s_agr = np_agr(subj)
    tenses = ["hab", "past"] + ([] if s_agr[2] == 1 and s_agr[1] == "sg" else ["fut"])
    tense = pick_tense(d, tenses)
    t_en, t_hi = optional_time(d, tense, 0.45)
    health = ("f", "sg", 3)
    en = np_en(subj) + be_en(tense, False, s_agr) + ["under", "the", "weather"] + t_en
    hi = genitive_hi(subj, health) + ["तबीयत"] + t_hi + ["ठीक", "नहीं"] + copula_hi(tense, health)
    return d.done(en, hi)


WEATHER_ADJECTIVES = {"cold": ("ठंडा",), "hot": ("गर्म",), "good": ("अच्छा",), "bad": ("खराब",)}


def weather_literal(d):
    """the weather is cold today -> मौसम आज ठंडा है (मौसम: masculine)"""
    idiom(d, "weather", "literal")
    d.feats["subj"] = "noun:weather"
    tense = pick_tense(d, ["hab", "past", "fut"])
    negative = d.chance(0.2)
    adjective = d.pick(list(WEATHER_ADJECTIVES))
    d.feats["cue"] = adjective
    p_en, p_hi = [], []
    if d.chance(0.3):
        key = d.pick(["village", "city"])
        d.feats["place"] = key
        p_en, p_hi = place_phrase(d, key, adj_p=0.0)
        d.depth += 1
    t_en, t_hi = optional_time(d, tense, 0.5)
    agr = DEFAULT_AGR
    en = ["the", "weather"] + be_en(tense, negative, agr) + [adjective] + p_en + t_en
    hi = ["मौसम"] + t_hi + p_hi + [WEATHER_ADJECTIVES[adjective][0]] + (["नहीं"] if negative else []) + copula_hi(tense, agr)
    return d.done(en, hi)


INSTRUMENTS = {"stick": ("डंडे",), "bat": ("बल्ले",), "hammer": ("हथौड़े",), "shoe": ("जूते",), "stone": ("पत्थर",)}


def sack_idiom(d):
    """he hit the sack early -> वह जल्दी सोने चला गया (चला गया agrees with the subject)"""
    idiom(d, "sack", "idiom")
    subj = subject_feats(d, person_np(d))
    tense = pick_tense(d, ["past", "past", "fut", "hab"])
    if same_past_clash("hit", tense, False, np_agr(subj)):
        return None
    m_en, m_hi, e_en, e_hi = [], [], [], []
    r = d.rng.random()
    if r < 0.35:
        m_en, m_hi = ["early"], ["जल्दी"]
        d.feats["cue"] = "early"
        d.depth += 1
    elif r < 0.7:
        e_en, e_hi = event_phrase(d, "after")
        d.feats["cue"] = "after"
        d.depth += 1
    t_en, t_hi = optional_time(d, tense, 0.25)
    en = np_en(subj) + verb_en("hit", tense, False, np_agr(subj)) + ["the", "sack"] + m_en + e_en + t_en
    hi = subject_hi(subj, False) + t_hi + e_hi + m_hi + ["सोने"] + compound_hi("चल", "जा", "ja", tense, np_agr(subj), main_agrees=True)
    return d.done(en, hi)


def hit_literal(d, key, object_hi):
    """he hit the sack/books with a stick -> उसने डंडे से बोरे/किताबों को मारा"""
    idiom(d, key, "literal")
    subj = subject_feats(d, person_np(d))
    tense = pick_tense(d, ["past", "past", "fut"])
    negative = d.chance(0.15)
    tool = d.pick(list(INSTRUMENTS))
    cue(d, tool)
    if tool == "bat":
        d.feats["sense"] = ("bat", "cricket")
    t_en, t_hi = optional_time(d, tense, 0.25)
    en = np_en(subj) + verb_en("hit", tense, negative, np_agr(subj)) + ["the", key, "with", "a", tool] + t_en
    hi = (ergative_if(subj, tense) + t_hi + [INSTRUMENTS[tool][0], "से"] + object_hi + ["को"] +
          verb_hi("मार", "c", tense, negative, verb_agr(subj, tense, DEFAULT_AGR)))
    return d.done(en, hi)


def sack_literal(d):
    return hit_literal(d, "sack", ["बोरे"])


def books_idiom(d):
    """he hit the books before the exam -> उसने परीक्षा से पहले मन लगाकर पढ़ाई की (पढ़ाई: f)"""
    idiom(d, "books", "idiom")
    subj = subject_feats(d, person_np(d))
    tense = pick_tense(d, ["past", "past", "fut", "hab"])
    if same_past_clash("hit", tense, False, np_agr(subj)):
        return None
    e_en, e_hi = optional_event(d, 0.55)
    t_en, t_hi = optional_time(d, tense, 0.25)
    study = ("f", "sg", 3)
    en = np_en(subj) + verb_en("hit", tense, False, np_agr(subj)) + ["the", "books"] + e_en + t_en
    hi = ergative_if(subj, tense) + t_hi + e_hi + ["मन", "लगाकर", "पढ़ाई"] + verb_hi("कर", "kar", tense, False, verb_agr(subj, tense, study))
    return d.done(en, hi)


def books_literal(d):
    return hit_literal(d, "books", ["किताबों"])


CAUSES = ["lie", "mistake", "fight", "joke"]


def hot_idiom(d):
    """he is in hot water because of the lie -> वह झूठ की वजह से मुसीबत में है"""
    idiom(d, "hot", "idiom")
    subj = subject_feats(d, person_np(d))
    s_agr = np_agr(subj)
    tenses = ["hab", "past"] + ([] if s_agr[2] == 1 and s_agr[1] == "sg" else ["fut"])
    tense = pick_tense(d, tenses)
    negative = d.chance(0.15)
    c_en, c_hi = [], []
    if d.chance(0.55):
        c = d.pick(CAUSES)
        cue(d, c)
        c_en, c_hi = ["because", "of", "the", c], np_hi(noun(c), oblique=True) + ["की", "वजह", "से"]
    t_en, t_hi = optional_time(d, tense, 0.25)
    en = np_en(subj) + be_en(tense, negative, s_agr) + ["in", "hot", "water"] + c_en + t_en
    hi = subject_hi(subj, False) + t_hi + c_hi + ["मुसीबत", "में"] + (["नहीं"] if negative else []) + copula_hi(tense, s_agr)
    return d.done(en, hi)


def hot_literal(d):
    """he washed the plates in hot water -> उसने प्लेटें गर्म पानी में धोईं; the eggs are in hot water"""
    idiom(d, "hot", "literal")
    if d.chance(0.3):  # things are in hot water
        key = d.pick(["egg", "vegetable", "plate", "shirt"])
        subj = subject_feats(d, noun(key, "pl", "the"))
        d.feats["object"] = key
        agr = np_agr(subj)
        tense = pick_tense(d, ["hab", "past"])
        t_en, t_hi = optional_time(d, tense, 0.3)
        en = np_en(subj) + be_en(tense, False, agr) + ["in", "hot", "water"] + t_en
        hi = np_hi(subj) + t_hi + ["गर्म", "पानी", "में"] + copula_hi(tense, agr)
        return d.done(en, hi)
    verb = d.pick(["wash", "cook"])
    subj = subject_feats(d, person_np(d))
    tense = pick_tense(d)
    negative = d.chance(0.15)
    obj = thing_np(d, verb, adj_p=0.1)
    d.feats["object"] = obj["key"]
    d.feats["verb"] = verb
    t_en, t_hi = optional_time(d, tense, 0.3)
    en, hi = transitive_clause(d, verb, np_en(obj, "obj"), np_hi(obj), np_agr(obj), tense, negative, subj,
                               (["in", "hot", "water"] + t_en, t_hi), extra_hi=["गर्म", "पानी", "में"])
    return d.done(en, hi)


def arm_idiom(d):
    """the car cost an arm and a leg -> कार बहुत महंगी थी (महंगा agrees with the thing)"""
    idiom(d, "arm", "idiom")
    key = d.pick([k for k, v in NOUNS.items() if "cost" in v[4]])
    number = "pl" if d.chance(0.25) else "sg"
    adjs = []
    if d.chance(0.2):  # the red car cost an arm and a leg -> लाल कार बहुत महंगी थी
        adjs.append(d.pick(["new", "big", "small", "red", "old_thing"]))
        d.depth += 1
    subj = subject_feats(d, noun(key, number, d.pick(SUBJECT_DETS_SG if number == "sg" else SUBJECT_DETS_PL), adjs))
    agr = np_agr(subj)
    tense = pick_tense(d, ["hab", "past", "past", "fut"])
    if same_past_clash("cost", tense, False, agr):
        return None
    t_en, t_hi = [], []
    if d.chance(0.3):  # a day, not a part of it: the car will cost an arm and a leg tomorrow
        d.depth += 1
        t_en, t_hi = time_phrase(d, tense, allowed={"today", "yesterday", "tomorrow"})
    en = np_en(subj) + verb_en("cost", tense, False, agr) + ["an", "arm", "and", "a", "leg"] + t_en
    hi = np_hi(subj) + t_hi + ["बहुत", adj_hi("expensive", agr, False)] + copula_hi(tense, agr)
    return d.done(en, hi)


def arm_literal(d):
    """the doll lost an arm and a leg -> गुड़िया का एक हाथ और एक टांग टूट गए (m pl)"""
    idiom(d, "arm", "literal")
    key = d.pick([k for k, v in NOUNS.items() if "toy" in v[4]])
    subj = subject_feats(d, noun(key, "sg", d.pick(SUBJECT_DETS_SG)))
    tense = pick_tense(d, ["past", "past", "fut"])
    p_en, p_hi = [], []
    if d.chance(0.3):
        place = d.pick(["accident", "garden", "room", "park"])
        d.feats["place"] = place
        p_en, p_hi = place_phrase(d, place, adj_p=0.0)
        d.depth += 1
    t_en, t_hi = optional_time(d, tense, 0.25)
    parts = ("m", "pl", 3)
    en = np_en(subj) + verb_en("lose", tense, False, np_agr(subj)) + ["an", "arm", "and", "a", "leg"] + p_en + t_en
    hi = (genitive_hi(subj, ("m", "sg", 3)) + ["एक", "हाथ", "और", "एक", "टांग"] + t_hi + p_hi +
          compound_hi("टूट", "जा", "ja", tense, parts))
    return d.done(en, hi)


def moon_idiom(d):
    """she dances once in a blue moon -> वह बहुत कम नाचती है (habitual only)"""
    idiom(d, "blue_moon", "idiom")
    if d.chance(0.5):
        verb = d.pick(["sleep", "laugh", "dance", "swim", "cry", "run"])
        subj = subject_feats(d, person_np(d))
        d.feats["verb"] = verb
        d.feats["tense"] = "hab"
        s_agr = np_agr(subj)
        adj = adjuncts(d, "hab", place_p=0.2, time_p=0.0, event_p=0.0)
        d.depth += 1
        en = np_en(subj) + verb_en(verb, "hab", False, s_agr) + adj[0] + ["once", "in", "a", "blue", "moon"]
        hi = subject_hi(subj, False) + adj[1] + ["बहुत", "कम"] + verb_hi(VERBS[verb][1], VERBS[verb][2], "hab", False, s_agr)
        return d.done(en, hi)
    verb = d.pick(list(TRANSITIVE))
    subj = subject_feats(d, person_np(d))
    if same_past_clash(verb, "hab", False, np_agr(subj)):
        return None
    d.feats["verb"] = verb
    d.feats["tense"] = "hab"
    obj = thing_np(d, TRANSITIVE[verb], adj_p=0.1)
    adj = adjuncts(d, "hab", place_p=0.2, time_p=0.0, event_p=0.0)
    d.depth += 1
    en, hi = transitive_clause(d, verb, np_en(obj, "obj"), np_hi(obj), np_agr(obj), "hab", False, subj,
                               (adj[0] + ["once", "in", "a", "blue", "moon"], adj[1]), extra_hi=["बहुत", "कम"])
    return d.done(en, hi)


def moon_literal(d):
    """she saw a blue moon in the sky -> उसने आसमान में एक नीला चाँद देखा"""
    idiom(d, "blue_moon", "literal")
    subj = subject_feats(d, person_np(d))
    tense = pick_tense(d, ["past", "past", "fut"])
    negative = d.chance(0.15)
    d.feats["verb"] = "see"
    p_en, p_hi = [], []
    if d.chance(0.5):
        d.feats["place"] = "sky"
        p_en, p_hi = ["in", "the", "sky"], ["आसमान", "में"]
        d.depth += 1
    t_en, t_hi = optional_time(d, tense, 0.3)
    en, hi = transitive_clause(d, "see", ["a", "blue", "moon"], ["एक", "नीला", "चाँद"], DEFAULT_AGR, tense,
                               negative, subj, (p_en + t_en, t_hi + p_hi))
    return d.done(en, hi)


def cat_idiom(d):
    """he let the cat out of the bag [to ravi] -> उसने [रवि को] राज़ बता दिया"""
    idiom(d, "cat", "idiom")
    subj = subject_feats(d, person_np(d))
    tense = pick_tense(d, ["past", "past", "fut"])
    en_to, hi_to = [], []
    if d.chance(0.45):
        who = person_np(d, role="obj", allow_possessive=False, adj_p=0.1)
        if np_key(who) == np_key(subj) or (who["kind"] == "pron" and subj["kind"] == "pron"):
            return None
        record_pair(d, subj, who)
        en_to, hi_to = ["to"] + np_en(who, "obj"), dative_hi(who)
    t_en, t_hi = optional_time(d, tense, 0.3)
    en = np_en(subj) + verb_en("let", tense, False, np_agr(subj)) + ["the", "cat", "out", "of", "the", "bag"] + en_to + t_en
    hi = ergative_if(subj, tense) + t_hi + hi_to + ["राज़", "बता"] + verb_hi("दे", "de", tense, False, verb_agr(subj, tense, DEFAULT_AGR))
    return d.done(en, hi)


MANNERS = {"gently": ["धीरे", "से"], "carefully": ["ध्यान", "से"], "quickly": ["जल्दी", "से"]}


def cat_literal(d):
    """he let the cat out of the bag gently -> उसने बिल्ली को धीरे से थैले से बाहर निकाला"""
    idiom(d, "cat", "literal")
    subj = subject_feats(d, person_np(d))
    tense = pick_tense(d, ["past", "past", "fut"])
    manner = d.pick(list(MANNERS))
    cue(d, manner)
    t_en, t_hi = optional_time(d, tense, 0.3)
    en = np_en(subj) + verb_en("let", tense, False, np_agr(subj)) + ["the", "cat", "out", "of", "the", "bag", manner] + t_en
    hi = (ergative_if(subj, tense) + t_hi + ["बिल्ली", "को"] + MANNERS[manner] + ["थैले", "से", "बाहर"] +
          verb_hi("निकाल", "c", tense, False, verb_agr(subj, tense, DEFAULT_AGR)))
    return d.done(en, hi)


def ice_idiom(d):
    """he broke the ice at the party -> उसने पार्टी में बातचीत शुरू की (बातचीत: feminine)"""
    idiom(d, "ice", "idiom")
    subj = subject_feats(d, person_np(d))
    tense = pick_tense(d, ["past", "past", "fut", "hab"])
    a_en, a_hi = [], []
    if d.chance(0.6):
        event = d.pick(["party", "wedding", "meeting", "show", "class", "dinner"])
        d.feats["event"] = event
        ev = noun(event, "sg", None if event == "dinner" else "the")
        a_en, a_hi = ["at"] + np_en(ev), np_hi(ev, oblique=True) + ["में"]
        d.depth += 1
    t_en, t_hi = optional_time(d, tense, 0.25)
    talk = ("f", "sg", 3)
    en = np_en(subj) + verb_en("break", tense, False, np_agr(subj)) + ["the", "ice"] + a_en + t_en
    hi = ergative_if(subj, tense) + t_hi + a_hi + ["बातचीत", "शुरू"] + verb_hi("कर", "kar", tense, False, verb_agr(subj, tense, talk))
    return d.done(en, hi)


def ice_literal(d):
    """he broke the ice on the lake / with a hammer -> उसने झील पर / हथौड़े से बर्फ़ तोड़ी"""
    idiom(d, "ice", "literal")
    subj = subject_feats(d, person_np(d))
    tense = pick_tense(d, ["past", "past", "fut"])
    negative = d.chance(0.15)
    if d.chance(0.5):
        key = d.pick(["river", "lake", "pond", "canal"])
        cue(d, key)
        np = noun(key)
        c_en, c_hi = ["on"] + np_en(np), np_hi(np, oblique=True) + ["पर"]
    else:
        tool = d.pick(["stick", "hammer", "stone"])
        cue(d, tool)
        c_en, c_hi = ["with", "a", tool], [INSTRUMENTS[tool][0], "से"]
    t_en, t_hi = optional_time(d, tense, 0.25)
    ice = ("f", "sg", 3)
    en = np_en(subj) + verb_en("break", tense, negative, np_agr(subj)) + ["the", "ice"] + c_en + t_en
    hi = ergative_if(subj, tense) + t_hi + c_hi + ["बर्फ़"] + verb_hi("तोड़", "c", tense, negative, verb_agr(subj, tense, ice))
    return d.done(en, hi)


# ---- the 5 ambiguous words ---------------------------------------------------------------------
# bat and mouse share their cue places: animals are seen in the wild or in a house, things in a
# shop, a market, a stadium or an office.  A distractor is a phrase that belongs with the other
# sense, placed where it decides nothing (bat at the shop ... at night).
SENSE_PLACES = {
    ("bat", "animal"): ["cave", "forest", "tree", "field", "garden", "house", "village"],
    ("bat", "cricket"): ["shop", "stadium", "market", "school", "city"],
    ("mouse", "animal"): ["kitchen", "house", "field", "garden", "forest", "village", "cave"],
    ("mouse", "device"): ["shop", "office", "market", "school", "city"],
}
SENSE_VERBS = {"animal": ["see", "catch"], "cricket": ["see", "buy"], "device": ["see", "buy"]}
SENSE_PURPOSE = {("bat", "cricket"): ["match", "cricket"], ("mouse", "device"): ["computer"]}
SENSE_DISTRACTOR = {("bat", "animal"): ("after_match", ["after", "the", "match"], ["मैच", "के", "बाद"]),
                    ("bat", "cricket"): ("night", ["at", "night"], ["रात", "को"]),
                    ("mouse", "animal"): ("office_time", ["after", "the", "meeting"], ["मीटिंग", "के", "बाद"])}


def sense(d, word, meaning):
    d.feats["sense"] = (word, meaning)


def bat_or_mouse(d, word, meaning):
    """he saw a bat in the cave -> उसने गुफा में एक चमगादड़ देखा; at the shop -> एक बल्ला"""
    sense(d, word, meaning)
    verb = d.pick(SENSE_VERBS[meaning])
    d.feats["verb"] = verb
    subj = subject_feats(d, person_np(d))
    tense = pick_tense(d, [t for t in TENSES if not (verb == "see" and t == "prog")])
    negative = d.chance(0.15)
    if same_past_clash(verb, tense, negative, np_agr(subj)):
        return None
    number = "pl" if d.chance(0.25) else "sg"
    adjs = []
    if d.chance(0.15):  # a new bat -> एक नया बल्ला, a small mouse -> एक छोटा चूहा
        adjs.append(d.pick(["big", "small"] + (["new", "red"] if meaning != "animal" else [])))
        d.depth += 1
    obj = noun(f"{word}_{meaning}", number, d.pick(OBJECT_DETS_SG if number == "sg" else OBJECT_DETS_PL), adjs)
    purposes = SENSE_PURPOSE.get((word, meaning), [])
    if purposes and verb == "buy" and d.chance(0.4):
        p = d.pick(purposes)
        d.feats["cue"] = p
        c_en, c_hi = ["for"] + np_en(noun(p, "sg", None if p == "cricket" else "the")), [NOUNS[p][2][1], "के", "लिए"]
    else:
        key = d.pick(SENSE_PLACES[(word, meaning)])
        d.feats["cue"] = key
        prep = "at" if key == "stadium" else "in"
        c_en, c_hi = place_phrase(d, key, prep, adj_p=0.1)
    d.depth += 1
    extra_en, extra_hi = [], []
    if (word, meaning) in SENSE_DISTRACTOR and d.chance(0.2):
        tag, extra_en, extra_hi = SENSE_DISTRACTOR[(word, meaning)]
        d.feats["distractor"] = tag
        d.depth += 1
    else:
        t_en, t_hi = optional_time(d, tense, 0.2)
        extra_en, extra_hi = t_en, t_hi
    en, hi = transitive_clause(d, verb, np_en(obj, "obj"), np_hi(obj), np_agr(obj), tense, negative, subj,
                               (c_en + extra_en, extra_hi + c_hi))
    return d.done(en, hi)



def bank_phrase(d, meaning):
    if meaning == "money":
        prep = d.pick(["in", "in", "at"])
        return [prep, "the", "bank"], ["बैंक", "में"]
    water = d.pick(WATERS)
    d.feats["cue"] = water
    if water == "river" and d.chance(0.3):
        return ["on", "the", "river", "bank"], ["नदी", "के", "किनारे", "पर"]
    return ["on", "the", "bank", "of", "the", water], np_hi(noun(water), oblique=True) + ["के", "किनारे", "पर"]


def bank(d, meaning):
    """in the bank -> बैंक में; on the bank of the river -> नदी के किनारे पर (a place adjunct)"""
    sense(d, "bank", meaning)
    subj = subject_feats(d, person_np(d))
    r = d.rng.random()
    b_en, b_hi = bank_phrase(d, meaning)
    if meaning == "money":
        d.feats.setdefault("cue", "bank")
    d.depth += 1
    if r < 0.35:  # an intransitive verb: sit, sleep, laugh, cry
        verb = d.pick(["sit", "sleep", "laugh", "cry"] if meaning == "river" else ["sit", "laugh", "cry"])
        tense = pick_tense(d, ["hab", "past", "fut"])
        negative = d.chance(0.15)
        d.feats["verb"] = verb
        t_en, t_hi = optional_time(d, tense, 0.25)
        s_agr = np_agr(subj)
        en = np_en(subj) + verb_en(verb, tense, negative, s_agr) + b_en + t_en
        hi = subject_hi(subj, False) + t_hi + b_hi + verb_hi(VERBS[verb][1], VERBS[verb][2], tense, negative, s_agr)
        return d.done(en, hi)
    # a transitive verb with an object: kept money in the bank / saw a snake on the bank of the river
    verb = d.pick(["keep", "see", "see"])
    d.feats["verb"] = verb
    tense = pick_tense(d, ["hab", "past", "fut"] if verb == "see" else TENSES)
    negative = d.chance(0.15)
    if verb == "keep":
        key = d.pick(["money", "money", "bag", "box", "book"])
        obj = noun(key, "sg", d.pick([None, "the"] if key == "money" else ["the", "a"]))
    else:
        obj = noun(d.pick(["snake", "thief", "snake", "thief", "friend", "doctor"]), "sg", "a")
    if obj["key"] in ("money", "snake", "thief"):
        assoc = {"money": "money", "snake": "river", "thief": "money"}[obj["key"]]
        if assoc != meaning:
            d.feats["distractor"] = obj["key"]
    d.feats["object"] = obj["key"]
    note_role(d, obj, "obj")
    marked = obj["key"] in ("friend", "doctor")
    o_hi = dative_hi(obj) if marked else np_hi(obj)
    t_en, t_hi = optional_time(d, tense, 0.25)
    en, hi = transitive_clause(d, verb, np_en(obj, "obj"), o_hi, np_agr(obj), tense, negative, subj,
                               (b_en + t_en, t_hi + b_hi), marked_object=marked)
    return d.done(en, hi)


def bank_short(d):
    """The tutorial's phrases: money bank grows -> पैसों वाला बैंक बढ़ता है; river bank flows; and the same
    two heads with other verbs, negated (नहीं before the last word, no है) or with a time adverb."""
    head = d.pick([("money", "पैसों वाला बैंक"), ("river", "नदी का किनारा")])
    verb = d.pick([("grows", "grow", "बढ़ता है"), ("flows", "flow", "बहता है"), ("opens", "open", "खुलता है"),
                   ("closes", "close", "बंद होता है"), ("shines", "shine", "चमकता है")])
    sense(d, "bank", head[0] if head[0] == "river" else "money")
    d.feats["cue"] = "short"
    v_en, v_hi = [verb[0]], verb[2].split()
    if d.chance(0.3):  # river bank does not flow -> नदी का किनारा नहीं बहता
        v_en, v_hi = ["does", "not", verb[1]], v_hi[:-2] + ["नहीं", v_hi[-2]]
    t_en, t_hi = optional_time(d, "hab", 0.4)
    return d.done([head[0], "bank"] + v_en + t_en, head[1].split() + t_hi + v_hi)


def lamp(d):
    """turned on the light in the kitchen -> रसोई में बत्ती जलाई (बत्ती: the lamp sense, f)"""
    sense(d, "light", "lamp")
    verb = d.pick(["turn_on", "turn_off", "turn_on", "turn_off", "see", "buy", "buy"])
    d.feats["verb"] = verb
    d.feats["cue"] = verb
    subj = subject_feats(d, person_np(d))
    tense = pick_tense(d, [t for t in TENSES if not (verb == "see" and t == "prog")])
    negative = d.chance(0.15)
    number = "pl" if d.chance(0.25) else "sg"
    det = "the" if verb.startswith("turn") else d.pick(["the", "a"] if number == "sg" else ["the", None])
    obj = noun("light_lamp", number, det)
    adj = adjuncts(d, tense, place_keys=["kitchen", "room", "house", "office", "shop", "garden"], place_p=0.45, event_p=0.1,
                   near_p=0.0)
    en, hi = transitive_clause(d, verb, np_en(obj, "obj"), np_hi(obj), np_agr(obj), tense, negative, subj, adj)
    return d.done(en, hi)


def letter(d, meaning):
    """wrote a letter to priya -> प्रिया को एक चिट्ठी लिखी; a letter on the board -> बोर्ड पर एक अक्षर"""
    sense(d, "letter", meaning)
    subj = subject_feats(d, person_np(d))
    number = "pl" if d.chance(0.25) else "sg"
    obj = noun(f"letter_{meaning}", number, d.pick(OBJECT_DETS_SG if number == "sg" else OBJECT_DETS_PL))
    if meaning == "mail":
        verb = d.pick(["write", "send", "give", "show"])
        who = person_np(d, role="obj", allow_possessive=False, adj_p=0.1)
        if np_key(who) == np_key(subj) or (who["kind"] == "pron" and subj["kind"] == "pron"):
            return None
        record_pair(d, subj, who)
        d.feats["cue"] = verb
        c_en, c_hi = ["to"] + np_en(who, "obj"), dative_hi(who)
    else:
        verb = d.pick(["write", "see", "read"])
        key = d.pick(SURFACES)
        d.feats["cue"] = key
        np = noun(key)
        c_en, c_hi = ["on"] + np_en(np), np_hi(np, oblique=True) + ["पर"]
    d.depth += 1
    d.feats["verb"] = verb
    tense = pick_tense(d, [t for t in TENSES if not (verb == "see" and t == "prog")])
    negative = d.chance(0.15)
    if same_past_clash(verb, tense, negative, np_agr(subj)):
        return None
    t_en, t_hi = optional_time(d, tense, 0.25)
    en, hi = transitive_clause(d, verb, np_en(obj, "obj"), np_hi(obj), np_agr(obj), tense, negative, subj,
                               (c_en + t_en, t_hi + c_hi))
    return d.done(en, hi)


# What flows, grows and shines, so that the verbs of the tutorial's phrases occur beyond those phrases.
THING_VERBS = {"flow": ["river", "canal", "water"], "grow": ["tree", "child"], "shine": ["watch", "car"]}


def thing_intransitive(d):
    """the river flows -> नदी बहती है; the children grow -> बच्चे बढ़ते हैं (habitual, agrees)."""
    verb = d.pick(list(THING_VERBS))
    key = d.pick(THING_VERBS[verb])
    entry = NOUNS[key]
    if entry[1] is None:  # a river, the water: singular, no "a" for a mass noun
        number, det = "sg", d.pick(["the", "the", "this", "that"])
    else:
        number = "pl" if d.chance(0.3) else "sg"
        det = d.pick(["the", "the", "a", "this", "that"] if number == "sg" else ["the", "the", "this", "that"])
    subj = subject_feats(d, noun(key, number, det))
    tense = pick_tense(d, ["hab"])
    negative = d.chance(0.2)
    d.feats["verb"] = verb
    t_en, t_hi = optional_time(d, tense, 0.3)
    s_agr = np_agr(subj)
    en = np_en(subj) + verb_en(verb, tense, negative, s_agr) + t_en
    hi = subject_hi(subj, False) + t_hi + verb_hi(VERBS[verb][1], VERBS[verb][2], tense, negative, s_agr)
    return d.done(en, hi)


# ---- role freedom: each noun in every role its meaning allows ----------------------------------
# The frames above give each noun the roles of their clause types.  The frames below let people,
# animals and things fill every role that their meaning allows: animals as subjects, every
# sensible object of each verb, coordinated subjects and objects (X and Y -> X और Y), beneficiaries
# (for X -> X के लिए), manner adverbs, copulas and locations with every kind of subject, and the
# idioms' words (moon, cake, beans, ice, sack, cat) in their plain senses.
FOODS = [k for k, v in NOUNS.items() if "food" in v[4]]
DRINKS = [k for k, v in NOUNS.items() if "drink" in v[4]]
THINGS = [k for k, v in NOUNS.items() if "thing" in v[4]]
BREAKABLE = ["plate", "watch", "toy", "doll", "box", "robot", "car"]
WASHABLE = ["car", "shirt", "plate", "egg", "vegetable", "ball", "doll", "bag", "toy", "box", "sack", "robot"]
HITTABLE = ["ball", "box", "car", "bag", "robot", "doll", "snake", "cat"]  # never the sack or the books
CATCHABLE = ["ball", "cat", "snake", "mouse_animal", "bat_animal"]
KEEPABLE = ["book", "bag", "box", "watch", "ball", "toy", "doll", "shirt", "money", "apple", "egg", "cake"]
KEEP_PLACES = ["box", "bag", "room", "kitchen", "house", "office", "car", "table", "shop", "sack"]
CONTAINER_DETS = ["the", "the", "a", "this", "that", "my", "his", "her", "our", "their"]
SEEABLE = THINGS + ["cat", "snake", "moon"]
# verb -> (animals that may be its subject, the objects it takes; "person" means people with को)
ROLE_VERBS = {
    "eat": (["cat", "mouse_animal", "snake"], FOODS + ["piece_of_cake"]),
    "drink": (["cat"], DRINKS),  # a cat drinks milk or water (see patient)
    "see": (["cat"], SEEABLE + ["person"]),
    "buy": ([], THINGS + DRINKS + ["piece_of_cake", "bat_cricket", "mouse_device"]),
    "cook": ([], ["egg", "vegetable", "bean"]),
    "wash": ([], WASHABLE),
    "hit": ([], HITTABLE + ["person"]),
    "break": (["cat"], BREAKABLE),
    "spill": (["cat"], DRINKS),
    "catch": (["cat"], CATCHABLE + ["person"]),
    "keep": ([], KEEPABLE),
    "call": ([], ["person"]),
    "give": ([], THINGS + DRINKS + FOODS),
    "send": ([], ["book", "bag", "box", "watch", "toy", "doll", "shirt", "money", "cake"]),
    "show": ([], ["book", "bag", "box", "watch", "toy", "doll", "shirt", "car", "robot", "ball"]),
}
ROLE_VERB_WEIGHTS = {"eat": 3, "drink": 2, "see": 3, "buy": 3, "cook": 2, "wash": 2, "hit": 3, "break": 3,
                     "spill": 2, "catch": 2, "keep": 2, "call": 1, "give": 2, "send": 1, "show": 1}
ROLE_VERB_LIST = [v for v, w in ROLE_VERB_WEIGHTS.items() for _ in range(w)]
SPILL_PLACES = ["floor", "table", "carpet", "kitchen", "room", "floor"]
BENEFICIARY_VERBS = {"buy", "cook", "write", "wash"}
RECIPIENT_VERBS = {"give", "send", "show"}
ANIMAL_PLACES = ["garden", "house", "room", "kitchen", "village", "field", "forest", "cave", "tree", "park"]
OWNER_DETS = ["my", "his", "her", "our", "their"]
# The ambiguous words a role clause may take as object: its verb decides the sense (buy a bat: the
# cricket bat; catch a bat: the animal), so short sentences whose only cue is the verb occur too.
SENSE_OF = {"mouse_animal": ("mouse", "animal"), "bat_animal": ("bat", "animal"),
            "bat_cricket": ("bat", "cricket"), "mouse_device": ("mouse", "device")}
OWN_P = 0.85  # the chance that a possessive on a non-subject noun is the subject's own (rule 17)


def subject_possessive(subj):
    """The possessive that refers back to a person subject: i -> my, ravi -> his, the girls -> their."""
    if subj is None or not is_person(subj):
        return None
    if subj["kind"] == "pron":
        return {"i": "my", "we": "our", "he": "his", "she": "her", "they": "their"}[subj["key"]]
    gender, number, _ = np_agr(subj)
    return "their" if number == "pl" else "her" if gender == "f" else "his"


def owner_det(d, subj):
    """A possessive for a non-subject noun: most often the subject's own (अपना), else any."""
    own = subject_possessive(subj)
    return own if own and d.chance(OWN_P) else d.pick(OWNER_DETS)


def plain_np(d, key, role, dets_sg=("the", "the", "a", "this", "that"), dets_pl=("the", None, "this", "that"),
             adj_p=0.15, owner_p=0.0, subj=None):
    """A noun phrase of any noun: mass nouns take no "a" and no plural; adjectives by its kind."""
    entry = NOUNS[key]
    if key in ("moon", "sky"):
        number, det = "sg", "the"
    elif entry[1] is None:
        number, det = "sg", d.pick(["the", "the", "this", "that"] + ([None] if "drink" in entry[4] else []))
    else:
        number = "pl" if key == "bean" or d.chance(0.3) else "sg"
        det = d.pick(list(dets_sg if number == "sg" else dets_pl))
        if d.chance(owner_p):
            det = owner_det(d, subj)
    adjs = []
    pool = (DRINK_ADJECTIVES if "drink" in entry[4] else THING_ADJECTIVES if key in ("bat_cricket", "mouse_device")
            else ["big", "small"] if "animal" in entry[4] or key in SENSE_OF
            else [] if "sky" in entry[4] else THING_ADJECTIVES)
    if pool and d.chance(adj_p):
        adjs.append(d.pick(pool))
        d.depth += 1
    if key in SENSE_OF:
        d.feats["sense"] = SENSE_OF[key]
        d.feats.setdefault("cue", "verb")
    return note_role(d, noun(key, number, det, adjs), role)


def conjunct(d, kind, role):
    """One conjunct of X and Y: a name or a noun phrase (no pronouns).  role is "subj" or the
    position of the coordination ("obj", "rec", "ben"), recorded for the lexical splits as "obj"."""
    role = "subj" if role == "subj" else "obj"
    if kind == "person":
        np = person_np(d, allow_pronoun=False, adj_p=0.1)
        return note_role(d, np, role) if role != "subj" else np
    return plain_np(d, kind, role, adj_p=0.1)


def coordinated(d, kind_a, kind_b, role):
    a, b = conjunct(d, kind_a, role), conjunct(d, kind_b, role)
    if np_key(a) == np_key(b) or (a["kind"] == "noun" and b["kind"] == "noun" and a["key"] == b["key"]):
        return None
    d.feats["coord"] = d.feats.get("coord", ()) + (role,)
    return coord(a, b)


def reflexive(np, subj):
    """his shirt after a subject he -> अपनी कमीज़ (see grammar.refers_to_subject); only a person
    subject owns things (a snake is in his box -> उसके डिब्बे में)."""
    for x in conjuncts(np):
        if x["kind"] == "noun":
            x["reflexive"] = is_person(subj) and refers_to_subject(x["det"], np_agr(subj))
    return np


def agent(d, animals, p_animal=0.15, p_coord=0.12):
    """The subject of a clause: a person, an animal the verb allows, or two of them coordinated."""
    r = d.rng.random()
    if animals and r < p_animal:
        key = d.pick(animals)
        dets = ("the", "the", "a", "this", "that", "my", "our", "their") if key == "cat" else ("the", "the", "a", "this", "that")
        subj = plain_np(d, key, "subj", dets_sg=dets, dets_pl=("the", "the", "this", "that"), adj_p=0.1)
    elif r < p_animal + p_coord:
        subj = coordinated(d, "person", "person", "subj")
        if subj is None:
            return None
    else:
        subj = person_np(d)
    return with_subject(d, subj)


def distinct(a, b):
    """Two noun phrases that are not the same person (and not two pronouns)."""
    ka = {np_key(x) for x in conjuncts(a)}
    kb = {np_key(x) for x in conjuncts(b)}
    return not (ka & kb) and not (a["kind"] == "pron" and b["kind"] == "pron")


PIECE_OF_CAKE = {"kind": "fixed", "en": ["a", "piece", "of", "cake"], "hi": ["केक", "का", "एक", "टुकड़ा"]}


def is_person(np):
    return all(x["kind"] in ("pron", "name") or "person" in NOUNS[x["key"]][4] for x in conjuncts(np))


def object_words(verb, obj):
    """An object's English and Hindi and the agreement it gives a perfective verb.  People, and
    anything hit, take को (the verb then stays masculine singular); coordinated things agree with
    the nearest conjunct (उसने एक सेब और एक केला खाया)."""
    if obj["kind"] == "fixed":
        return obj["en"], obj["hi"], DEFAULT_AGR
    if is_person(obj) or verb == "hit":
        return np_en(obj, "obj"), dative_hi(obj), DEFAULT_AGR
    return np_en(obj, "obj"), np_hi(obj), np_agr(conjuncts(obj)[-1])


def patient(d, verb, subj):
    """The object noun phrase of a role clause, or None when the draw is to be discarded."""
    options = ROLE_VERBS[verb][1]
    if verb == "drink" and subj["kind"] == "noun" and subj["key"] == "cat":
        options = ["milk", "water"]
    key = d.pick(options)
    if key == "piece_of_cake":  # a piece of cake, literally
        d.feats["idiom"] = ("cake", "literal")
        return PIECE_OF_CAKE
    if key == "person":
        obj = person_argument(d, subj, "obj", coord_p=0.25, owner_p=0.35)
        if obj is None:
            return None
    elif verb in ("eat", "drink", "buy", "give", "wash", "break") and d.chance(0.12):
        other = d.pick([k for k in options if k not in ("person", "piece_of_cake", key)])
        obj = coordinated(d, key, other, "obj")
        if obj is None:
            return None
    else:
        obj = plain_np(d, key, "obj", owner_p=0.3 if "thing" in NOUNS[key][4] and verb != "buy" else 0.0, adj_p=0.15,
                       subj=subj)
    if key != "person":
        d.feats["object"] = key
    return reflexive(obj, subj)


def person_argument(d, subj, role, coord_p, owner_p):
    """A person as object ("obj"), recipient ("rec") or beneficiary ("ben"): one person (a
    possessive on a noun with probability owner_p) or two coordinated (coord_p); None when it
    would be the subject itself.  Names acting on names are recorded; अपना where it refers back."""
    if d.chance(coord_p):
        who = coordinated(d, "person", "person", role)
    else:
        who = person_np(d, role="obj", adj_p=0.1)
        if owner_p and who["kind"] == "noun" and who["key"] in POSSESSABLE and d.chance(owner_p):
            who["det"] = owner_det(d, subj)
    if who is None or not distinct(subj, who):
        return None
    record_pair(d, subj, who)
    return reflexive(who, subj)


def beneficiary(d, subj):
    """for X -> X के लिए (for him -> उसके लिए; for ravi and priya -> रवि और प्रिया के लिए)."""
    who = person_argument(d, subj, "ben", coord_p=0.3, owner_p=0.35)
    if who is not None:
        d.depth += 1
    return who


def recipient(d, subj):
    """to X -> X को (coordinated: रवि और प्रिया को)."""
    return person_argument(d, subj, "rec", coord_p=0.3, owner_p=0.25)


# manner adverbs each verb takes (none for a spill, a sight, a purchase or a breakage)
VERB_MANNERS = {"eat": ["quickly", "carefully"], "wash": ["gently", "carefully", "quickly"],
                "cook": ["carefully", "quickly"], "catch": ["carefully", "quickly", "gently"], "hit": ["gently"],
                "give": ["carefully", "quickly"], "send": ["carefully", "quickly"], "show": ["carefully", "quickly"],
                "keep": ["carefully"], "drink": ["quickly"], "run": ["quickly"], "swim": ["quickly"],
                "dance": ["quickly"]}


def manner(d, p=0.12, verb=None):
    options = VERB_MANNERS.get(verb, [])
    if options and d.chance(p):
        m = d.pick(options)
        d.feats["manner"] = m
        d.depth += 1
        return m
    return None


def manner_words(m):
    return ([m], list(MANNERS[m])) if m else ([], [])


def place_cue(d):
    """A word sense decided by the verb alone: a place adjunct, if any, becomes its recorded cue."""
    if "sense" in d.feats and "place" in d.feats:
        d.feats["cue"] = d.feats["place"]
    elif d.feats.get("cue") == "verb":
        d.feats["cue"] = d.feats.get("verb")


def container_phrase(d, key, subj):
    """in a box, in his bag, on the table: a container or room with any determiner; a possessive
    that refers to the subject is अपना (रवि अपने थैले में सेब रखेगा)."""
    det = d.pick(CONTAINER_DETS) if NOUNS[key][1] is not None else d.pick(["the", "the", "my", "his", "her", "our", "their"])
    if det in OWNER_DETS:
        det = owner_det(d, subj)
    np = reflexive(noun(key, "sg", det), subj)
    post = PLACE_POSTPOSITION.get(key, "में")
    return [PLACE_PREPOSITION.get(key, "in")] + np_en(np), np_hi(np, oblique=True) + [post]


def instrument_words(tools):
    """with a stick -> डंडे से; with a stick and a stone -> डंडे और पत्थर से (oblique, से once)."""
    en, hi = ["with"], []
    for i, t in enumerate(tools):
        en += (["and"] if i else []) + ["a", t]
        hi += (["और"] if i else []) + [INSTRUMENTS[t][0]]
    return en, hi + ["से"]


def realize_role_clause(verb, subj, tense, negative, obj, to=None, tool=None, how=None, ben=None, loc=([], []),
                        adj=([], [])):
    """English: S V O [loc] [to X] [with Y] [manner] [for X] [adjuncts];
    Hindi: S(ने in the past) [time] [event] [place] [loc] [X को] [X के लिए] [Y से] [manner] O [नहीं] V.
    The perfective agrees with an unmarked object, the other tenses with the subject."""
    obj_en, obj_hi, obj_agr = object_words(verb, obj)
    to_en, to_hi = (["to"] + np_en(to, "obj"), dative_hi(to)) if to else ([], [])
    with_en, with_hi = instrument_words(tool) if tool else ([], [])
    m_en, m_hi = manner_words(how)
    for_en, for_words = (["for"] + np_en(ben, "obj"), for_hi(ben)) if ben else ([], [])
    en = (np_en(subj) + verb_en(verb, tense, negative, np_agr(subj)) + obj_en + loc[0] + to_en + with_en + m_en +
          for_en + adj[0])
    v_agr = obj_agr if tense == "past" else np_agr(subj)
    if verb == "spill":  # spill X -> X गिरा देना (a compound: never negated)
        v_hi = ["गिरा"] + verb_hi("दे", "de", tense, False, v_agr)
    else:
        v_hi = verb_hi(VERBS[verb][1], VERBS[verb][2], tense, negative, v_agr)
    hi = subject_hi(subj, ergative=(tense == "past")) + adj[1] + loc[1] + to_hi + for_words + with_hi + m_hi + obj_hi + v_hi
    return en, hi


def role_clause(d):
    """S V O with free roles: people and animals as subjects, every sensible object, coordination,
    recipients, beneficiaries, instruments and manner (see realize_role_clause)."""
    verb = d.pick(ROLE_VERB_LIST)
    d.feats["verb"] = verb
    subj = agent(d, ROLE_VERBS[verb][0])
    if subj is None:
        return None
    tenses = [t for t in TENSES if not (verb == "see" and t == "prog") and not (verb == "spill" and t == "prog")]
    tense = pick_tense(d, tenses)
    negative = verb != "spill" and d.chance(0.15)
    if same_past_clash(verb, tense, negative, np_agr(subj)):
        return None
    obj = patient(d, verb, subj)
    if obj is None:
        return None
    if tense == "hab" and any(x["kind"] == "noun" and x["number"] == "sg" and x["det"] in ("a", "this", "that") and
                              NOUNS[x["key"]][1] is not None for x in conjuncts(obj)):
        return None  # a habit is not about one particular thing: they eat mangoes, not that mango
    to = None
    if verb in RECIPIENT_VERBS:
        to = recipient(d, subj)
        if to is None:
            return None
    tool = None
    if verb == "hit" and d.chance(0.45):
        tool = (d.pick(list(INSTRUMENTS)),)
        if tool[0] == "bat":
            if "sense" in d.feats:
                return None
            d.feats["sense"] = ("bat", "cricket")
            d.feats["cue"] = "hit"
        elif d.chance(0.2):  # with a stick and a stone -> डंडे और पत्थर से (never the ambiguous bat)
            tool += (d.pick([t for t in INSTRUMENTS if t not in ("bat",) + tool]),)
            d.feats["coord"] = d.feats.get("coord", ()) + ("tool",)
        d.feats["tool"] = tool[0]
        d.depth += 1
    ben = None
    if verb in BENEFICIARY_VERBS and d.chance(0.5):
        ben = beneficiary(d, subj)
        if ben is None:
            return None
    how = manner(d, 0.15, verb)
    loc = ([], [])
    if verb == "keep":  # keep X in the box -> डिब्बे में X रखना (the place is an argument)
        key = d.pick(KEEP_PLACES)
        d.feats["place"] = key
        loc = container_phrase(d, key, subj)
        adj = adjuncts(d, tense, place_keys=None, time_p=0.3, event_p=0.05)
    elif d.feats.get("object") == "moon":  # we saw the moon in the sky -> हमने आसमान में चाँद देखा
        adj = adjuncts(d, tense, place_keys=None, time_p=0.3, event_p=0.0)
        if d.chance(0.6):
            d.feats["place"] = "sky"
            d.depth += 1
            adj = (["in", "the", "sky"] + adj[0], adj[1] + ["आसमान", "में"])
    else:
        if verb == "spill":  # on the floor -> फ़र्श पर
            places = SPILL_PLACES + GENERAL_PLACES
        elif subj["kind"] == "noun" and subj["key"] in ROLE_VERBS[verb][0]:
            places = ANIMAL_PLACES
        elif verb == "buy":
            places = ["market", "shop", "city", "village"] + EVENT_PLACES
        else:
            places = GENERAL_PLACES + EVENT_PLACES
        adj = adjuncts(d, tense, place_keys=places, place_p=0.25 if verb != "spill" else 0.5, time_p=0.3, event_p=0.1)
    place_cue(d)
    return d.done(*realize_role_clause(verb, subj, tense, negative, obj, to, tool, how, ben, loc, adj))


# animal -> intransitive verbs it does; people do them all
ANIMAL_INTRANSITIVE = {"cat": ["sleep", "run"], "snake": ["sleep", "swim"], "mouse_animal": ["sleep", "run"],
                       "bat_animal": ["sleep"]}


def role_intransitive(d):
    """Intransitives with people, animals and coordinations as subjects, and manner adverbs:
    the bats sleep in the cave -> चमगादड़ गुफा में सोते हैं; ravi and priya danced -> रवि और प्रिया नाचे."""
    verb = d.pick(["sleep", "laugh", "dance", "run", "swim", "cry", "sleep", "run"])
    d.feats["verb"] = verb
    animals = [a for a, vs in ANIMAL_INTRANSITIVE.items() if verb in vs]
    subj = agent(d, animals, p_animal=0.35, p_coord=0.2)
    if subj is None:
        return None
    tense = pick_tense(d)
    negative = d.chance(0.15)
    s_agr = np_agr(subj)
    m_en, m_hi = manner_words(manner(d, 0.15, verb))
    if verb == "swim":
        key = d.pick(WATERS)
        d.feats["place"] = key
        w_en, w_hi = place_phrase(d, key, adj_p=0)
        adj = adjuncts(d, tense, place_keys=None, time_p=0.3, event_p=0.1)
        adj = (w_en + adj[0], adj[1] + w_hi)
    else:
        is_animal = subj["kind"] == "noun" and subj["key"] in ANIMAL_INTRANSITIVE
        adj = adjuncts(d, tense, place_keys=ANIMAL_PLACES if is_animal else GENERAL_PLACES + EVENT_PLACES,
                       place_p=0.4 if is_animal else 0.3)
    place_cue(d)
    en = np_en(subj) + verb_en(verb, tense, negative, s_agr) + m_en + adj[0]
    hi = subject_hi(subj, False) + adj[1] + m_hi + verb_hi(VERBS[verb][1], VERBS[verb][2], tense, negative, s_agr)
    return d.done(en, hi)


COPULA_SUBJECTS = {  # kind of subject -> (nouns, predicate adjectives)
    "drink": (DRINKS, ["hot", "cold"]),
    "place": (["garden", "room", "kitchen", "market", "park", "house", "village", "city", "shop", "office", "school"],
              ["big", "small", "new", "old_thing"]),
    "animal": (["cat", "snake"], ["hungry", "happy", "sad", "sick", "angry", "big", "small"]),
    "cold": (["ice", "water"], ["cold"]),
    "heaven": (["sky"], ["blue"]),
}


def copula_other(d):
    """Copulas with a drink, a place, an animal, ice or the moon as subject: चाय गर्म है,
    बगीचा बड़ा था, बिल्ली भूखी होगी; coordinated people: रवि और प्रिया खुश हैं."""
    kind = d.pick(list(COPULA_SUBJECTS) + ["people"])
    if kind == "people":
        subj = coordinated(d, "person", "person", "subj")
        if subj is None:
            return None
        adjective = d.pick(PREDICATE_ADJECTIVES)
    else:
        nouns, adjectives = COPULA_SUBJECTS[kind]
        key = d.pick(nouns)
        dets_sg = ("the", "the", "this", "that", "my", "our", "their") if kind in ("place", "animal") else ("the", "the", "this", "that")
        subj = plain_np(d, key, "subj", dets_sg=dets_sg, dets_pl=("the", "this", "that"), adj_p=0.0)
        adjective = d.pick(adjectives)
    with_subject(d, subj)
    s_agr = np_agr(subj)
    tense = pick_tense(d, ["hab", "past", "fut"])
    negative = d.chance(0.2)
    d.feats["verb"] = "be"
    lasting = adjective in ("big", "small", "new", "old_thing", "blue")  # no "the garden was big in the evening"
    adj = adjuncts(d, tense, place_keys=None, time_p=0.0 if lasting else 0.35, event_p=0.0 if lasting else 0.05)
    en = np_en(subj) + be_en(tense, negative, s_agr) + [adj_en(adjective)] + adj[0]
    hi = subject_hi(subj, False) + adj[1] + [adj_hi(adjective, s_agr, False)] + (["नहीं"] if negative else []) + copula_hi(tense, s_agr)
    return d.done(en, hi)


LOCATIONS = {"person": GENERAL_PLACES + EVENT_PLACES + ["car"],
             "animal": ANIMAL_PLACES + ["table", "floor", "box", "bag", "car", "sack"],
             "thing": ["box", "bag", "car", "table", "floor", "room", "kitchen", "house", "office", "shop", "sack"]}
LOCATED_THINGS = ["book", "bag", "box", "watch", "ball", "toy", "doll", "shirt", "apple", "egg", "cake", "plate", "money"]


def locative(d):
    """X is in/on/near the Y -> X Y में/पर/के पास है: रवि बगीचे में है, किताब थैले में थी."""
    r = d.rng.random()
    if r < 0.45:
        kind, subj = "person", person_np(d) if d.chance(0.8) else coordinated(d, "person", "person", "subj")
        if subj is None:
            return None
    elif r < 0.65:
        kind, subj = "animal", plain_np(d, d.pick(["cat", "snake"]), "subj", adj_p=0.1)
    else:
        kind, subj = "thing", plain_np(d, d.pick(LOCATED_THINGS), "subj", dets_sg=("the", "the", "this", "that", "my", "our"),
                                       adj_p=0.1)
    with_subject(d, subj)
    s_agr = np_agr(subj)
    tense = pick_tense(d, ["hab", "past"] + ([] if s_agr[2] == 1 and s_agr[1] == "sg" else ["fut"]))
    negative = d.chance(0.15)
    d.feats["verb"] = "be"
    near = kind != "thing" and d.chance(0.2)
    key = d.pick(NEAR_PLACES if near else [k for k in LOCATIONS[kind] if not (subj["kind"] == "noun" and subj["key"] == k)])
    d.feats["place"] = key
    prep = "on" if key in ("table", "floor", "tree") else None
    if key in ("box", "bag", "car", "sack") and not near:
        l_en, l_hi = container_phrase(d, key, subj)
    else:
        l_en, l_hi = place_phrase(d, key, prep, adj_p=0.1, near=near)
    d.depth += 1
    t_en, t_hi = optional_time(d, tense, 0.3)
    en = np_en(subj) + be_en(tense, negative, en_agr(subj)) + l_en + t_en
    hi = subject_hi(subj, False) + t_hi + l_hi + (["नहीं"] if negative else []) + copula_hi(tense, s_agr)
    return d.done(en, hi)


OPENERS = ["bank_money", "shop", "market", "school", "office", "door"]


def opens(d):
    """the bank opens in the morning -> बैंक सुबह खुलता है; the shop closed -> दुकान बंद हुई."""
    key = d.pick(OPENERS)
    subj = with_subject(d, noun(key, "sg", "the" if key == "bank_money" else d.pick(["the", "the", "this", "that"])))
    if key == "bank_money":
        sense(d, "bank", "money")
    verb = d.pick(["open", "close"])
    d.feats["verb"] = verb
    d.feats.setdefault("cue", verb) if key == "bank_money" else None
    tense = pick_tense(d)
    negative = d.chance(0.15)
    s_agr = np_agr(subj)
    adj = adjuncts(d, tense, place_keys=None, time_p=0.55, event_p=0.12)
    en = np_en(subj) + verb_en(verb, tense, negative, s_agr) + adj[0]
    v_hi = verb_hi("खुल", "c", tense, negative, s_agr) if verb == "open" else ["बंद"] + verb_hi("हो", "ho", tense, negative, s_agr)
    hi = subject_hi(subj, False) + adj[1] + v_hi
    return d.done(en, hi)


INDOORS = {"room", "kitchen", "office", "door", "shop", "house"}
THING_VERB_PLACES = {  # verb -> {subject: where it does it}; near any place, but for the moon
    "flow": {"river": [], "canal": [], "water": ["river", "canal", "pond", "lake"]},
    "shine": {"moon": ["sky"], "watch": ["shop", "room"], "car": ["shop", "garden"]},
    "grow": {"tree": ["garden", "forest", "field"], "child": ["village", "city"]},
}


def thing_verb(d):
    """What flows, shines and grows, with a place: the river flows near the village -> नदी गाँव के
    पास बहती है; the water flows in the canal -> पानी नहर में बहता है."""
    verb = d.pick(list(THING_VERB_PLACES))
    key = d.pick(list(THING_VERB_PLACES[verb]))
    places = THING_VERB_PLACES[verb][key]
    entry = NOUNS[key]
    number = "sg" if entry[1] is None or d.chance(0.7) else "pl"
    det = d.pick(["the", "the", "this", "that"] + (["a"] if number == "sg" and entry[1] is not None else []))
    subj = subject_feats(d, noun(key, number, det))
    d.feats["verb"] = verb
    tense = pick_tense(d, ["hab", "hab", "prog", "fut"])
    negative = d.chance(0.15)
    s_agr = np_agr(subj)
    p_en, p_hi = [], []
    if d.chance(0.7):
        near = verb == "flow" and (not places or d.chance(0.4))
        place = d.pick([p for p in NEAR_PLACES if p != key and p not in INDOORS] if near else places)
        d.feats["place"] = place
        p_en, p_hi = (["in", "the", "sky"], ["आसमान", "में"]) if place == "sky" and not near else place_phrase(d, place, adj_p=0.1, near=near)
        d.depth += 1
    t_en, t_hi = optional_time(d, tense, 0.3)
    en = np_en(subj) + verb_en(verb, tense, negative, s_agr) + p_en + t_en
    hi = subject_hi(subj, False) + t_hi + p_hi + verb_hi(VERBS[verb][1], VERBS[verb][2], tense, negative, s_agr)
    return d.done(en, hi)


# name -> (draw function, weight)
FRAMES = {
    "transitive": (plain_transitive, 12), "person_object": (person_object, 5), "meet": (meet, 4),
    "ditransitive": (ditransitive, 7), "intransitive": (intransitive, 7),
    "copula_person": (copula_person, 4), "copula_thing": (copula_thing, 4),
    "cake_idiom": (cake_idiom, 2), "cake_literal": (cake_literal, 2),
    "leg_idiom": (leg_idiom, 2), "leg_literal": (leg_literal, 2),
    "spill_idiom": (spill_idiom, 2), "spill_literal": (spill_literal, 2),
    "feet_idiom": (feet_idiom, 2), "feet_literal": (feet_literal, 2),
    "weather_idiom": (weather_idiom, 2), "weather_literal": (weather_literal, 1),
    "sack_idiom": (sack_idiom, 2), "sack_literal": (sack_literal, 2),
    "books_idiom": (books_idiom, 2), "books_literal": (books_literal, 2),
    "hot_idiom": (hot_idiom, 2), "hot_literal": (hot_literal, 2),
    "arm_idiom": (arm_idiom, 2), "arm_literal": (arm_literal, 2),
    "moon_idiom": (moon_idiom, 2), "moon_literal": (moon_literal, 2),
    "cat_idiom": (cat_idiom, 2), "cat_literal": (cat_literal, 2),
    "ice_idiom": (ice_idiom, 2), "ice_literal": (ice_literal, 2),
    "bat_animal": (lambda d: bat_or_mouse(d, "bat", "animal"), 2),
    "bat_cricket": (lambda d: bat_or_mouse(d, "bat", "cricket"), 2),
    "mouse_animal": (lambda d: bat_or_mouse(d, "mouse", "animal"), 2),
    "mouse_device": (lambda d: bat_or_mouse(d, "mouse", "device"), 2),
    "bank_money": (lambda d: bank(d, "money"), 2), "bank_river": (lambda d: bank(d, "river"), 2),
    "bank_short": (bank_short, 0.5), "thing_intransitive": (thing_intransitive, 1),
    "lamp": (lamp, 2),
    "letter_mail": (lambda d: letter(d, "mail"), 1.5), "letter_char": (lambda d: letter(d, "char"), 1.5),
    "role_clause": (role_clause, 30), "role_intransitive": (role_intransitive, 7), "copula_other": (copula_other, 4),
    "locative": (locative, 5), "opens": (opens, 2.5), "thing_verb": (thing_verb, 3),
}


def draw(rng, frame):
    """One sentence of the named frame, or None when the draw hit a combination the grammar avoids."""
    return FRAMES[frame][0](Draw(rng, frame))
