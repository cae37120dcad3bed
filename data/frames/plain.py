# data/frames/plain.py — the plain clauses: transitive, person objects, meet, ditransitive,
# intransitive and the copulas.
from grammar import (DEFAULT_AGR, NOUNS, PREDICATE_ADJECTIVES, THING_PREDICATE_ADJECTIVES, VERBS, adj_hi,
                     be_en, coord, copula_hi, dative_hi, noun, np_agr, np_en, np_hi, subject_hi, verb_en,
                     verb_hi)
from .phrases import (SUBJECT_DETS_PL, SUBJECT_DETS_SG, SURFACES, SURFACE_OBJECTS, TENSES, adjuncts, np_key,
                      person_np, pick_tense, place_phrase, same_past_clash, thing_np, with_subject)
from .arguments import coordinated, distinct, recipient, record_pair, reflexive


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
