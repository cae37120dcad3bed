# data/frames/senses.py — the 5 ambiguous words (bat, mouse, bank, lamp, letter) in each sense, with
# the places, verbs and distractors that decide it, and things as subjects of intransitive verbs.
from grammar import NOUNS, dative_hi, noun, np_agr, np_en, np_hi
from .phrases import (OBJECT_DETS_PL, OBJECT_DETS_SG, SURFACES, WATERS, adjuncts, discard_if, note_role,
                      optional_adjective, person_np, place_phrase, same_past_clash, tense_and_negation, with_subject)
from .arguments import optional_time, to_phrase
from .plain import intransitive_clause, transitive_clause

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


def bat_or_mouse(d, word, meaning):
    """he saw a bat in the cave -> उसने गुफा में एक चमगादड़ देखा; at the shop -> एक बल्ला"""
    d.feats["sense"] = (word, meaning)
    verb = d.pick(SENSE_VERBS[meaning])
    subj = with_subject(d, person_np(d))
    tense, negative = tense_and_negation(d, verb, negative_p=0.15)
    discard_if(same_past_clash(verb, tense, negative, np_agr(subj)))
    number = "pl" if d.chance(0.25) else "sg"
    # a new bat -> एक नया बल्ला, a small mouse -> एक छोटा चूहा
    adjs = optional_adjective(d, ["big", "small"] + (["new", "red"] if meaning != "animal" else []), 0.15)
    obj = noun(f"{word}_{meaning}", number, d.pick(OBJECT_DETS_SG if number == "sg" else OBJECT_DETS_PL), adjs)
    purposes = SENSE_PURPOSE.get((word, meaning), [])
    if purposes and verb == "buy" and d.chance(0.4):
        p = d.pick(purposes)
        d.feats["cue"] = p
        c_en, c_hi = ["for"] + np_en(noun(p, "sg", None if p == "cricket" else "the")), [NOUNS[p][2][1], "के", "लिए"]
    else:
        key = d.pick(SENSE_PLACES[(word, meaning)])
        d.feats["cue"] = key
        c_en, c_hi = place_phrase(d, key, adj_p=0.1)  # in the cave, at the stadium
    d.depth += 1
    if (word, meaning) in SENSE_DISTRACTOR and d.chance(0.2):
        tag, extra_en, extra_hi = SENSE_DISTRACTOR[(word, meaning)]
        d.feats["distractor"] = tag
        d.depth += 1
    else:
        extra_en, extra_hi = optional_time(d, tense, 0.2)
    return d.done(*transitive_clause(d, verb, np_en(obj, "obj"), np_hi(obj), np_agr(obj), tense, negative, subj,
                                     (c_en + extra_en, extra_hi + c_hi)))


def bank_phrase(d, meaning):
    if meaning == "money":
        d.feats["cue"] = "bank"
        return [d.pick(["in", "in", "at"]), "the", "bank"], ["बैंक", "में"]
    water = d.pick(WATERS)
    d.feats["cue"] = water
    if water == "river" and d.chance(0.3):
        return ["on", "the", "river", "bank"], ["नदी", "के", "किनारे", "पर"]
    return ["on", "the", "bank", "of", "the", water], np_hi(noun(water), oblique=True) + ["के", "किनारे", "पर"]


def bank(d, meaning):
    """in the bank -> बैंक में; on the bank of the river -> नदी के किनारे पर (a place adjunct)"""
    d.feats["sense"] = ("bank", meaning)
    subj = with_subject(d, person_np(d))
    r = d.rng.random()
    b_en, b_hi = bank_phrase(d, meaning)
    d.depth += 1
    if r < 0.35:  # an intransitive verb: sit, sleep, laugh, cry
        verb = d.pick(["sit", "sleep", "laugh", "cry"] if meaning == "river" else ["sit", "laugh", "cry"])
        tense, negative = tense_and_negation(d, verb, ["hab", "past", "fut"], 0.15)
        t_en, t_hi = optional_time(d, tense, 0.25)
        return d.done(*intransitive_clause(verb, subj, tense, negative, b_en + t_en, t_hi + b_hi))
    # a transitive verb with an object: kept money in the bank / saw a snake on the bank of the river
    verb = d.pick(["keep", "see", "see"])
    tense, negative = tense_and_negation(d, verb, negative_p=0.15)
    if verb == "keep":
        key = d.pick(["money", "money", "bag", "box", "book"])
        obj = noun(key, "sg", d.pick([None, "the"] if key == "money" else ["the", "a"]))
    else:
        obj = noun(d.pick(["snake", "thief", "snake", "thief", "friend", "doctor"]), "sg", "a")
    if {"money": "money", "snake": "river", "thief": "money"}.get(obj["key"], meaning) != meaning:
        d.feats["distractor"] = obj["key"]  # an object that belongs with the other bank
    d.feats["object"] = obj["key"]
    note_role(d, obj, "obj")
    marked = obj["key"] in ("friend", "doctor")
    o_hi = dative_hi(obj) if marked else np_hi(obj)
    t_en, t_hi = optional_time(d, tense, 0.25)
    return d.done(*transitive_clause(d, verb, np_en(obj, "obj"), o_hi, np_agr(obj), tense, negative, subj,
                                     (b_en + t_en, t_hi + b_hi), marked_object=marked))


def bank_short(d):
    """The tutorial's phrases: money bank grows -> पैसों वाला बैंक बढ़ता है; river bank flows; and the same
    two heads with other verbs, negated (नहीं before the last word, no है) or with a time adverb."""
    head = d.pick([("money", "पैसों वाला बैंक"), ("river", "नदी का किनारा")])
    verb = d.pick([("grows", "grow", "बढ़ता है"), ("flows", "flow", "बहता है"), ("opens", "open", "खुलता है"),
                   ("closes", "close", "बंद होता है"), ("shines", "shine", "चमकता है")])
    d.feats["sense"] = ("bank", head[0])
    d.feats["cue"] = "short"
    v_en, v_hi = [verb[0]], verb[2].split()
    if d.chance(0.3):  # river bank does not flow -> नदी का किनारा नहीं बहता
        v_en, v_hi = ["does", "not", verb[1]], v_hi[:-2] + ["नहीं", v_hi[-2]]
    t_en, t_hi = optional_time(d, "hab", 0.4)
    return d.done([head[0], "bank"] + v_en + t_en, head[1].split() + t_hi + v_hi)


def lamp(d):
    """turned on the light in the kitchen -> रसोई में बत्ती जलाई (बत्ती: the lamp sense, f)"""
    verb = d.pick(["turn_on", "turn_off", "turn_on", "turn_off", "see", "buy", "buy"])
    d.feats.update(sense=("light", "lamp"), cue=verb)
    subj = with_subject(d, person_np(d))
    tense, negative = tense_and_negation(d, verb, negative_p=0.15)
    number = "pl" if d.chance(0.25) else "sg"
    det = "the" if verb.startswith("turn") else d.pick(["the", "a"] if number == "sg" else ["the", None])
    obj = noun("light_lamp", number, det)
    adj = adjuncts(d, tense, place_keys=["kitchen", "room", "house", "office", "shop", "garden"], place_p=0.45, event_p=0.1,
                   near_p=0.0)
    return d.done(*transitive_clause(d, verb, np_en(obj, "obj"), np_hi(obj), np_agr(obj), tense, negative, subj, adj))


def letter(d, meaning):
    """wrote a letter to priya -> प्रिया को एक चिट्ठी लिखी; a letter on the board -> बोर्ड पर एक अक्षर"""
    d.feats["sense"] = ("letter", meaning)
    subj = with_subject(d, person_np(d))
    number = "pl" if d.chance(0.25) else "sg"
    obj = noun(f"letter_{meaning}", number, d.pick(OBJECT_DETS_SG if number == "sg" else OBJECT_DETS_PL))
    if meaning == "mail":
        verb = d.pick(["write", "send", "give", "show"])
        c_en, c_hi = to_phrase(d, subj)
        d.feats["cue"] = verb
    else:
        verb = d.pick(["write", "see", "read"])
        key = d.pick(SURFACES)
        d.feats["cue"] = key
        np = noun(key)
        c_en, c_hi = ["on"] + np_en(np), np_hi(np, oblique=True) + ["पर"]
    d.depth += 1
    tense, negative = tense_and_negation(d, verb, negative_p=0.15)
    discard_if(same_past_clash(verb, tense, negative, np_agr(subj)))
    t_en, t_hi = optional_time(d, tense, 0.25)
    return d.done(*transitive_clause(d, verb, np_en(obj, "obj"), np_hi(obj), np_agr(obj), tense, negative, subj,
                                     (c_en + t_en, t_hi + c_hi)))


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
    subj = with_subject(d, noun(key, number, det))
    tense, negative = tense_and_negation(d, verb, ["hab"])
    t_en, t_hi = optional_time(d, tense, 0.3)
    return d.done(*intransitive_clause(verb, subj, tense, negative, t_en, t_hi))
