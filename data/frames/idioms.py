# data/frames/idioms.py — the 12 idioms, each with an idiomatic and a literal reading, and the cue
# that decides between them.
from grammar import (DEFAULT_AGR, NOUNS, VERBS, adj_hi, be_en, compound_hi, copula_hi, dative_hi, for_hi,
                     future_hi, genitive_hi, noun, np_agr, np_en, np_hi, perfective_hi, subject_hi, verb_en,
                     verb_hi)
from .phrases import (EVENT_NOUNS, SUBJECT_DETS_PL, SUBJECT_DETS_SG, TASK_NOUNS, TENSES, adjuncts,
                      event_phrase, np_key, person_np, pick_tense, place_phrase, same_past_clash, thing_np,
                      time_phrase)
from .arguments import INSTRUMENTS, MANNERS, manner, optional_time, record_pair, subject_feats
from .plain import TRANSITIVE, transitive_clause


# ---- the 12 idioms, each with an idiomatic and a literal reading -------------------------------
def idiom(d, key, reading):
    d.feats["idiom"] = (key, reading)


def cue(d, value):
    d.feats["cue"] = value
    d.depth += 1


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
