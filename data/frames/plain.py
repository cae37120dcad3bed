# data/frames/plain.py — the plain clauses: transitive, person objects, meet, ditransitive,
# intransitive and the copulas.
from grammar import (DEFAULT_AGR, NOUNS, PREDICATE_ADJECTIVES, THING_PREDICATE_ADJECTIVES, VERBS, adj_en, adj_hi,
                     be_en, coord, copula_hi, dative_hi, en_agr, noun, np_agr, np_en, np_hi, subject_hi, verb_en,
                     verb_hi)
from .phrases import (SUBJECT_DETS_PL, SUBJECT_DETS_SG, SURFACES, SURFACE_OBJECTS, WATERS, adjuncts, copula_tenses,
                      discard_if, person_np, place_phrase, same_past_clash, tense_and_negation, thing_np, with_subject)
from .arguments import coordinated, distinct, record_pair, reflexive, to_phrase

TRANSITIVE = {"eat": "food", "drink": "drink", "read": "read", "write": "write", "buy": "thing",
              "see": "thing", "cook": "cook", "wash": "wash"}


def transitive_clause(d, verb, obj_en, obj_hi, obj_agr, tense, negative, subj, adj_en_hi,
                      marked_object=False, extra_hi=(), hindi_verb=None):
    """S V O [adjuncts] -> S(ने in the past) [adjuncts] O [बहुत कम] [नहीं] V.
    The perfective agrees with an unmarked object; a को-object leaves it masculine singular.
    hindi_verb: (stem, class) where the Hindi verb is not the English one's (the idioms; spill X ->
    X गिरा देना in the role clauses)."""
    stem, cls = hindi_verb or VERBS[verb][1:]
    s_agr = np_agr(subj)
    past = tense == "past"
    v_agr = (DEFAULT_AGR if marked_object else obj_agr) if past else s_agr
    return (np_en(subj) + verb_en(verb, tense, negative, s_agr) + obj_en + adj_en_hi[0],
            subject_hi(subj, ergative=past) + adj_en_hi[1] + obj_hi + list(extra_hi) +
            verb_hi(stem, cls, tense, negative, v_agr))


def intransitive_clause(verb, subj, tense, negative, en_after, hi_before):
    """S V [en_after] -> S [hi_before] V: no ने, and the verb agrees with the subject in every tense."""
    s_agr = np_agr(subj)
    return (np_en(subj) + verb_en(verb, tense, negative, s_agr) + en_after,
            subject_hi(subj, False) + hi_before + verb_hi(VERBS[verb][1], VERBS[verb][2], tense, negative, s_agr))


def copula_clause(subj, tense, negative, en_predicate, hi_before, hi_predicate):
    """S is/was/will be [en_predicate] -> S [hi_before] [hi_predicate] [नहीं] है/था/होगा (agreeing
    with the subject; money, पैसे in Hindi, is singular in English)."""
    return (np_en(subj) + be_en(tense, negative, en_agr(subj)) + en_predicate,
            np_hi(subj) + hi_before + hi_predicate + (["नहीं"] if negative else []) + copula_hi(tense, np_agr(subj)))


def predicate_adjective(subj, tense, negative, adjective, adj):
    """S is ADJ [adjuncts] -> S [adjuncts] ADJ [नहीं] है: the adjective agrees with the subject."""
    return copula_clause(subj, tense, negative, [adj_en(adjective)] + adj[0], adj[1],
                         [adj_hi(adjective, np_agr(subj), False)])


def plain_transitive(d):
    verb = d.pick(list(TRANSITIVE))
    subj = with_subject(d, person_np(d))
    tense, negative = tense_and_negation(d, verb)
    discard_if(same_past_clash(verb, tense, negative, np_agr(subj)))
    obj = thing_np(d, TRANSITIVE[verb], adj_p=0.25,
                   extra_adjs=("heavy", "light", "light") if verb in ("buy", "see") else ())
    if "light" in obj["adjs"]:
        d.feats.update(sense=("light", "weight"), cue=obj["key"])
    d.feats["object"] = obj["key"]
    blue_moon = tense == "hab" and not negative and d.chance(0.12)  # once in a blue moon
    adj = adjuncts(d, tense)
    if verb in ("write", "read") and obj["key"] in SURFACE_OBJECTS and "place" not in d.feats and d.chance(0.4):
        # wrote a question on the board -> ... बोर्ड पर एक सवाल लिखा (after time and event in Hindi)
        key = d.pick(SURFACES)
        d.feats["place"] = key
        d.depth += 1
        adj = (["on", "the", key] + adj[0], adj[1] + np_hi(noun(key), oblique=True) + ["पर"])
    if blue_moon:  # once in a blue moon -> बहुत कम (idiomatic, "rarely"), after the object
        d.feats["idiom"] = ("blue_moon", "idiom")
        d.depth += 1
        adj = (adj[0] + ["once", "in", "a", "blue", "moon"], adj[1])
    return d.done(*transitive_clause(d, verb, np_en(obj, "obj"), np_hi(obj), np_agr(obj), tense, negative, subj, adj,
                                     extra_hi=["बहुत", "कम"] if blue_moon else ()))


def other_person(d, subj):
    """The person a subject sees, calls or meets: one (no possessive) or two coordinated, which may
    hold a possessive (we saw our friends -> अपने दोस्तों); the draw is discarded when it would be the subject."""
    other = coordinated(d, "person", "person", "obj") if d.chance(0.2) else person_np(d, role="obj", allow_possessive=False)
    discard_if(not distinct(subj, other))
    record_pair(d, subj, other)
    return reflexive(other, subj)


def person_object(d):
    """see/call a person: रवि ने प्रिया को देखा (को-object, the verb stays masculine singular)."""
    verb = d.pick(["see", "call"])
    subj = with_subject(d, person_np(d))
    other = other_person(d, subj)
    tense, negative = tense_and_negation(d, verb)
    adj = adjuncts(d, tense)
    return d.done(*transitive_clause(d, verb, np_en(other, "obj"), dative_hi(other), DEFAULT_AGR, tense,
                                     negative, subj, adj, marked_object=True))


PRONOUN_SE = {"i": "मुझसे", "we": "हमसे", "he": "उससे", "she": "उससे", "they": "उनसे"}


def meet(d):
    """meet X -> X से मिलना: intransitive in Hindi, so the verb agrees with the subject, no ने."""
    subj = with_subject(d, person_np(d))
    other = other_person(d, subj)  # we meet our friend and amit -> हम अपने दोस्त और अमित से मिलते हैं
    tense, negative = tense_and_negation(d, "meet")
    adj = adjuncts(d, tense)
    other_hi = [PRONOUN_SE[other["key"]]] if other["kind"] == "pron" else np_hi(other, oblique=True) + ["से"]
    return d.done(*intransitive_clause("meet", subj, tense, negative, np_en(other, "obj") + adj[0], adj[1] + other_hi))


def ditransitive(d):
    """give/send/show O to X -> X को O देना (ने in the past; the verb agrees with O)."""
    verb = d.pick(["give", "send", "show"])
    subj = with_subject(d, person_np(d))
    to = to_phrase(d, subj, adj_p=0.2)
    tense, negative = tense_and_negation(d, verb)
    if d.chance(0.12):  # a piece of cake, literally
        obj_en, obj_hi, obj_agr = ["a", "piece", "of", "cake"], ["केक", "का", "एक", "टुकड़ा"], DEFAULT_AGR
        d.feats["idiom"] = ("cake", "literal")
    else:
        obj = noun("money", "sg", d.pick([None, "the"])) if d.chance(0.1) else thing_np(d, "thing")
        obj_en, obj_hi, obj_agr = np_en(obj, "obj"), np_hi(obj), np_agr(obj)
        d.feats["object"] = obj["key"]
    adj = adjuncts(d, tense)
    return d.done(*transitive_clause(d, verb, obj_en, obj_hi, obj_agr, tense, negative, subj,
                                     (to[0] + adj[0], adj[1] + to[1])))


def intransitive(d):
    """Intransitive verbs agree with the subject in every tense (वह सोया, लड़कियाँ सोईं)."""
    verb = d.pick(["sleep", "laugh", "dance", "run", "swim", "cry"] + ["go", "come"] * 2)
    subj = with_subject(d, person_np(d))
    tense, negative = tense_and_negation(d, verb)
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
                d.feats.update(sense=("bank", "money"), cue="go")
        adj = adjuncts(d, tense, place_keys=None)
    elif verb == "swim":
        key = d.pick(WATERS)
        d.feats["place"] = key
        w_en, w_hi = place_phrase(d, key, adj_p=0)
        adj = adjuncts(d, tense, place_keys=None)
        adj = (w_en + adj[0], adj[1] + w_hi)
    else:
        adj = adjuncts(d, tense)
    return d.done(*intransitive_clause(verb, subj, tense, negative, dest_en + adj[0], adj[1] + dest_hi))


def copula_person(d):
    subj = with_subject(d, person_np(d))
    tense, negative = tense_and_negation(d, "be", copula_tenses(np_agr(subj)), 0.25)
    adjective = d.pick(PREDICATE_ADJECTIVES)
    adj = adjuncts(d, tense, place_keys=None, time_p=0.4, event_p=0.15)
    return d.done(*predicate_adjective(subj, tense, negative, adjective, adj))


def copula_thing(d):
    """the bag is light -> थैला हल्का है (light: the weight sense); adjectives agree."""
    key = d.pick([k for k, v in NOUNS.items() if "thing" in v[4]])
    number = "pl" if d.chance(0.3) else "sg"
    subj = with_subject(d, noun(key, number, d.pick(SUBJECT_DETS_SG if number == "sg" else SUBJECT_DETS_PL)))
    tense, negative = tense_and_negation(d, tenses=["hab", "past", "fut"])
    adjective = d.pick(THING_PREDICATE_ADJECTIVES)
    if adjective == "light":
        d.feats.update(sense=("light", "weight"), cue=key)
    adj = adjuncts(d, tense, place_keys=None, time_p=0.3, event_p=0)
    return d.done(*predicate_adjective(subj, tense, negative, adjective, adj))
