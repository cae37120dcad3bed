# data/frames/idioms.py — the 12 idioms, each with an idiomatic and a literal reading, and the cue
# that decides between them.
from functools import partial

from grammar import (DEFAULT_AGR, NOUNS, adj_hi, be_en, compound_hi, copula_hi, genitive_hi, ke_hi, noun, np_agr,
                     np_en, np_hi, subject_hi, verb_en, verb_hi)
from .phrases import (SUBJECT_DETS_PL, SUBJECT_DETS_SG, TASK_NOUNS, adjuncts, copula_tenses, discard_if, event_phrase,
                      np_key, optional_adjective, person_np, pick_tense, place_phrase, same_past_clash,
                      tense_and_negation, thing_np, with_subject)
from .arguments import INSTRUMENTS, MANNERS, instrument_words, optional_time, to_phrase
from .plain import TRANSITIVE, copula_clause, intransitive_clause, transitive_clause

PAST_OR_FUTURE = ("past", "past", "fut")
ANY_TENSE = ("past", "past", "fut", "hab")


def idiom(d, key, reading):
    d.feats["idiom"] = (key, reading)


def cue(d, value):
    d.feats["cue"] = value
    d.depth += 1


def person_reading(d, key, reading, tenses=ANY_TENSE):
    """Starts an idiom reading whose subject is a person: (subject, tense)."""
    idiom(d, key, reading)
    subj = with_subject(d, person_np(d))
    return subj, pick_tense(d, tenses)


def optional_event(d, p=0.3, which=None, events=None):
    if d.chance(p):
        d.depth += 1
        return event_phrase(d, which, d.pick(events) if events else None)
    return [], []


def fixed_object(d, key, reading, verb, obj, phrase, time_p, tenses=ANY_TENSE, negative_p=0.0, hindi_verb=None):
    """A reading that is one transitive clause of a person on a fixed object: S V O [phrase] [time] ->
    S(ने in the past) [time] [phrase] O [नहीं] V.  obj: its English, its Hindi and the agreement it
    gives a perfective; phrase(d, subj): the reading's own words (English, Hindi); negative_p 0 draws
    no negation."""
    subj, tense = person_reading(d, key, reading, tenses)
    negative = negative_p > 0 and d.chance(negative_p)
    discard_if(same_past_clash(verb, tense, negative, np_agr(subj)))
    words = phrase(d, subj)
    t_en, t_hi = optional_time(d, tense, time_p)
    return d.done(*transitive_clause(d, verb, *obj, tense, negative, subj, (words[0] + t_en, t_hi + words[1]),
                                     hindi_verb=hindi_verb))


def optional_place(d, p, keys):
    """in the park -> पार्क में, with probability p (no adjective)."""
    if not d.chance(p):
        return [], []
    key = d.pick(keys)
    d.feats["place"] = key
    d.depth += 1
    return place_phrase(d, key, adj_p=0.0)


def cake_idiom(d):
    """the exam was a piece of cake [for X] -> परीक्षा [X के लिए] बहुत आसान थी"""
    idiom(d, "cake", "idiom")
    task = d.pick(TASK_NOUNS)
    subj = with_subject(d, noun(task, "sg", d.pick(["the", "the", "this", "that", "my", "his", "her", "our", "their"])))
    tense, negative = tense_and_negation(d, tenses=["hab", "past", "fut"])
    en_for, hi_for = [], []
    if d.chance(0.35):
        who = person_np(d, role="obj", adj_p=0.1)
        en_for, hi_for = ["for"] + np_en(who, "obj"), ke_hi(who, "लिए")
        d.feats["for"] = np_key(who)
        d.depth += 1
    t_en, t_hi = optional_time(d, tense, 0.25)
    return d.done(*copula_clause(subj, tense, negative, ["a", "piece", "of", "cake"] + en_for + t_en, t_hi + hi_for,
                                 ["बहुत", "आसान"]))


def cake_literal(d):
    """she ate a piece of cake -> उसने केक का एक टुकड़ा खाया (टुकड़ा: masculine singular)"""
    idiom(d, "cake", "literal")
    verb = d.pick(["eat", "buy", "see", "eat"])
    subj = with_subject(d, person_np(d))
    tense, negative = tense_and_negation(d, verb)
    adj = adjuncts(d, tense, place_p=0.25, time_p=0.3, event_p=0.1)
    return d.done(*transitive_clause(d, verb, ["a", "piece", "of", "cake"], ["केक", "का", "एक", "टुकड़ा"],
                                     DEFAULT_AGR, tense, negative, subj, adj))


def leg_idiom(d):
    """X said break a leg to Y -> X ने Y को शुभकामनाएँ दीं (शुभकामनाएँ: feminine plural)"""
    def to_and_event(d, subj):
        to = to_phrase(d, subj) if d.chance(0.5) else ([], [])
        e_en, e_hi = optional_event(d, 0.5, which="before")
        return to[0] + e_en, e_hi + to[1]
    return fixed_object(d, "leg", "idiom", "say", (["break", "a", "leg"], ["शुभकामनाएँ"], ("f", "pl", 3)), to_and_event,
                        0.2, negative_p=0.15)


def leg_literal(d):
    """he broke a leg on the stairs -> उसकी टांग सीढ़ियों पर टूट गई (the leg is the subject)"""
    idiom(d, "leg", "literal")
    subj = person_np(d)
    discard_if(np_agr(subj)[1] != "sg")
    with_subject(d, subj)
    tense, negative = tense_and_negation(d, tenses=PAST_OR_FUTURE, negative_p=0.15)
    leg = ("f", "sg", 3)
    p_en, p_hi = [], []
    if d.chance(0.5):
        key = d.pick(["stairs", "accident", "match", "park", "garden"])
        d.feats["place"] = key
        d.depth += 1
        if key == "stairs":
            p_en, p_hi = ["on", "the", "stairs"], ["सीढ़ियों", "पर"]
        else:
            p_en, p_hi = place_phrase(d, key, adj_p=0.0)
    e_en, e_hi = optional_event(d, 0.2, which="before")
    t_en, t_hi = optional_time(d, tense, 0.2)
    v_hi = verb_hi("टूट", "c", tense, True, leg) if negative else compound_hi("टूट", "जा", "ja", tense, leg)
    en = np_en(subj) + verb_en("break", tense, negative, np_agr(subj)) + ["a", "leg"] + p_en + e_en + t_en
    hi = genitive_hi(subj, leg) + ["टांग"] + t_hi + e_hi + p_hi + v_hi
    return d.done(en, hi)


def spill_idiom(d):
    """he spilled the beans [about the party] -> उसने [पार्टी का] राज़ खोल दिया"""
    return fixed_object(d, "spill", "idiom", "spill", (["the", "beans"], ["राज़", "खोल"], DEFAULT_AGR),
                        lambda d, subj: optional_event(d, 0.5, which="about"), 0.3, hindi_verb=("दे", "de"))


def spill_literal(d):
    """he spilled the beans on the floor -> उसने फ़र्श पर फलियाँ गिरा दीं (फलियाँ: f pl)"""
    def where(d, subj):
        key = d.pick(["floor", "table", "carpet", "floor", "kitchen", "room", "garden", "park"])
        d.feats["place"] = key
        cue(d, key)
        return place_phrase(d, key, "on" if key in ("floor", "table", "carpet") else "in", adj_p=0.1)
    return fixed_object(d, "spill", "literal", "spill", (["the", "beans"], ["फलियाँ", "गिरा"], ("f", "pl", 3)), where, 0.3,
                        hindi_verb=("दे", "de"))


def feet_idiom(d):
    """she got cold feet before the wedding -> वह शादी से पहले घबरा गई (agrees with the subject)"""
    subj, tense = person_reading(d, "feet", "idiom")
    e_en, e_hi = optional_event(d, 0.55, which="before")
    t_en, t_hi = optional_time(d, tense, 0.25)
    en = np_en(subj) + verb_en("get", tense, False, np_agr(subj)) + ["cold", "feet"] + e_en + t_en
    hi = subject_hi(subj, False) + t_hi + e_hi + compound_hi("घबरा", "जा", "ja", tense, np_agr(subj))
    return d.done(en, hi)


def feet_literal(d):
    """she got cold feet in the snow -> उसके पैर बर्फ़ में ठंडे हो गए (पैर: masculine plural)"""
    subj, tense = person_reading(d, "feet", "literal")
    key = d.pick(["snow", "rain", "winter", "river", "lake", "pond", "canal", "snow"])
    d.feats["place"] = key
    cue(d, key)
    if key in ("snow", "rain", "winter"):
        p_en, p_hi = ["in", "the", key], [{"snow": "बर्फ़", "rain": "बारिश", "winter": "सर्दी"}[key], "में"]
    else:
        p_en, p_hi = place_phrase(d, key, adj_p=0.0)
    t_en, t_hi = optional_time(d, tense, 0.25)
    feet = ("m", "pl", 3)
    en = np_en(subj) + verb_en("get", tense, False, np_agr(subj)) + ["cold", "feet"] + p_en + t_en
    hi = genitive_hi(subj, feet) + ["पैर"] + t_hi + p_hi + ["ठंडे"] + compound_hi("हो", "जा", "ja", tense, feet)
    return d.done(en, hi)


def weather_idiom(d):
    """he is under the weather today -> उसकी तबीयत आज ठीक नहीं है (तबीयत: feminine)"""
    idiom(d, "weather", "idiom")
    subj = with_subject(d, person_np(d))
    tense = pick_tense(d, copula_tenses(np_agr(subj)))
    t_en, t_hi = optional_time(d, tense, 0.45)
    health = ("f", "sg", 3)
    en = np_en(subj) + be_en(tense, False, np_agr(subj)) + ["under", "the", "weather"] + t_en
    hi = genitive_hi(subj, health) + ["तबीयत"] + t_hi + ["ठीक", "नहीं"] + copula_hi(tense, health)
    return d.done(en, hi)


WEATHER_ADJECTIVES = {"cold": "ठंडा", "hot": "गर्म", "good": "अच्छा", "bad": "खराब"}


def weather_literal(d):
    """the weather is cold today -> मौसम आज ठंडा है (मौसम: masculine)"""
    idiom(d, "weather", "literal")
    d.feats["subj"] = "noun:weather"
    tense, negative = tense_and_negation(d, tenses=["hab", "past", "fut"])
    adjective = d.pick(list(WEATHER_ADJECTIVES))
    d.feats["cue"] = adjective
    p_en, p_hi = optional_place(d, 0.3, ["village", "city"])
    t_en, t_hi = optional_time(d, tense, 0.5)
    en = ["the", "weather"] + be_en(tense, negative, DEFAULT_AGR) + [adjective] + p_en + t_en
    hi = (["मौसम"] + t_hi + p_hi + [WEATHER_ADJECTIVES[adjective]] + (["नहीं"] if negative else []) +
          copula_hi(tense, DEFAULT_AGR))
    return d.done(en, hi)


def sack_idiom(d):
    """he hit the sack early -> वह जल्दी सोने चला गया (चला गया agrees with the subject)"""
    subj, tense = person_reading(d, "sack", "idiom")
    discard_if(same_past_clash("hit", tense, False, np_agr(subj)))
    m_en, m_hi, e_en, e_hi = [], [], [], []
    r = d.rng.random()
    if r < 0.35:
        m_en, m_hi = ["early"], ["जल्दी"]
        cue(d, "early")
    elif r < 0.7:
        e_en, e_hi = event_phrase(d, "after")
        cue(d, "after")
    t_en, t_hi = optional_time(d, tense, 0.25)
    en = np_en(subj) + verb_en("hit", tense, False, np_agr(subj)) + ["the", "sack"] + m_en + e_en + t_en
    hi = subject_hi(subj, False) + t_hi + e_hi + m_hi + ["सोने"] + compound_hi("चल", "जा", "ja", tense, np_agr(subj), main_agrees=True)
    return d.done(en, hi)


def hit_literal(d, key, object_hi):
    """he hit the sack/books with a stick -> उसने डंडे से बोरे/किताबों को मारा"""
    def with_tool(d, subj):
        tool = d.pick(list(INSTRUMENTS))
        cue(d, tool)
        if tool == "bat":
            d.feats["sense"] = ("bat", "cricket")
        return instrument_words((tool,))
    return fixed_object(d, key, "literal", "hit", (["the", key], object_hi + ["को"], DEFAULT_AGR), with_tool, 0.25,
                        PAST_OR_FUTURE, negative_p=0.15)


sack_literal = partial(hit_literal, key="sack", object_hi=["बोरे"])
books_literal = partial(hit_literal, key="books", object_hi=["किताबों"])


def books_idiom(d):
    """he hit the books before the exam -> उसने परीक्षा से पहले मन लगाकर पढ़ाई की (पढ़ाई: f)"""
    return fixed_object(d, "books", "idiom", "hit", (["the", "books"], ["मन", "लगाकर", "पढ़ाई"], ("f", "sg", 3)),
                        lambda d, subj: optional_event(d, 0.55), 0.25, hindi_verb=("कर", "kar"))


def hot_idiom(d):
    """he is in hot water because of the lie -> वह झूठ की वजह से मुसीबत में है"""
    idiom(d, "hot", "idiom")
    subj = with_subject(d, person_np(d))
    tense, negative = tense_and_negation(d, tenses=copula_tenses(np_agr(subj)), negative_p=0.15)
    c_en, c_hi = [], []
    if d.chance(0.55):
        c = d.pick(["lie", "mistake", "fight", "joke"])
        cue(d, c)
        c_en, c_hi = ["because", "of", "the", c], np_hi(noun(c), oblique=True) + ["की", "वजह", "से"]
    t_en, t_hi = optional_time(d, tense, 0.25)
    return d.done(*copula_clause(subj, tense, negative, ["in", "hot", "water"] + c_en + t_en, t_hi + c_hi,
                                 ["मुसीबत", "में"]))


def hot_literal(d):
    """he washed the plates in hot water -> उसने प्लेटें गर्म पानी में धोईं; the eggs are in hot water"""
    idiom(d, "hot", "literal")
    if d.chance(0.3):  # things are in hot water
        key = d.pick(["egg", "vegetable", "plate", "shirt"])
        subj = with_subject(d, noun(key, "pl", "the"))
        d.feats["object"] = key
        tense = pick_tense(d, ["hab", "past"])
        t_en, t_hi = optional_time(d, tense, 0.3)
        return d.done(*copula_clause(subj, tense, False, ["in", "hot", "water"] + t_en, t_hi, ["गर्म", "पानी", "में"]))
    verb = d.pick(["wash", "cook"])
    subj = with_subject(d, person_np(d))
    tense, negative = tense_and_negation(d, verb, negative_p=0.15)
    obj = thing_np(d, verb, adj_p=0.1)
    d.feats["object"] = obj["key"]
    t_en, t_hi = optional_time(d, tense, 0.3)
    return d.done(*transitive_clause(d, verb, np_en(obj, "obj"), np_hi(obj), np_agr(obj), tense, negative, subj,
                                     (["in", "hot", "water"] + t_en, t_hi), extra_hi=["गर्म", "पानी", "में"]))


def arm_idiom(d):
    """the car cost an arm and a leg -> कार बहुत महंगी थी (महंगा agrees with the thing)"""
    idiom(d, "arm", "idiom")
    key = d.pick([k for k, v in NOUNS.items() if "cost" in v[4]])
    number = "pl" if d.chance(0.25) else "sg"
    # the red car cost an arm and a leg -> लाल कार बहुत महंगी थी
    adjs = optional_adjective(d, ["new", "big", "small", "red", "old_thing"], 0.2)
    subj = with_subject(d, noun(key, number, d.pick(SUBJECT_DETS_SG if number == "sg" else SUBJECT_DETS_PL), adjs))
    agr = np_agr(subj)
    tense = pick_tense(d, ["hab", "past", "past", "fut"])
    discard_if(same_past_clash("cost", tense, False, agr))
    # a day, not a part of it: the car will cost an arm and a leg tomorrow
    t_en, t_hi = optional_time(d, tense, 0.3, allowed={"today", "yesterday", "tomorrow"})
    en = np_en(subj) + verb_en("cost", tense, False, agr) + ["an", "arm", "and", "a", "leg"] + t_en
    hi = np_hi(subj) + t_hi + ["बहुत", adj_hi("expensive", agr, False)] + copula_hi(tense, agr)
    return d.done(en, hi)


def arm_literal(d):
    """the doll lost an arm and a leg -> गुड़िया का एक हाथ और एक टांग टूट गए (m pl)"""
    idiom(d, "arm", "literal")
    key = d.pick([k for k, v in NOUNS.items() if "toy" in v[4]])
    subj = with_subject(d, noun(key, "sg", d.pick(SUBJECT_DETS_SG)))
    tense = pick_tense(d, PAST_OR_FUTURE)
    p_en, p_hi = optional_place(d, 0.3, ["accident", "garden", "room", "park"])
    t_en, t_hi = optional_time(d, tense, 0.25)
    parts = ("m", "pl", 3)
    en = np_en(subj) + verb_en("lose", tense, False, np_agr(subj)) + ["an", "arm", "and", "a", "leg"] + p_en + t_en
    hi = (genitive_hi(subj, ("m", "sg", 3)) + ["एक", "हाथ", "और", "एक", "टांग"] + t_hi + p_hi +
          compound_hi("टूट", "जा", "ja", tense, parts))
    return d.done(en, hi)


def moon_idiom(d):
    """she dances once in a blue moon -> वह बहुत कम नाचती है (habitual only)"""
    idiom(d, "blue_moon", "idiom")
    intransitive = d.chance(0.5)
    verb = d.pick(["sleep", "laugh", "dance", "swim", "cry", "run"] if intransitive else list(TRANSITIVE))
    subj = with_subject(d, person_np(d))
    discard_if(same_past_clash(verb, "hab", False, np_agr(subj)))
    d.feats.update(verb=verb, tense="hab")
    obj = None if intransitive else thing_np(d, TRANSITIVE[verb], adj_p=0.1)
    adj = adjuncts(d, "hab", place_p=0.2, time_p=0.0, event_p=0.0)
    d.depth += 1
    moon_en = adj[0] + ["once", "in", "a", "blue", "moon"]
    if intransitive:
        return d.done(*intransitive_clause(verb, subj, "hab", False, moon_en, adj[1] + ["बहुत", "कम"]))
    return d.done(*transitive_clause(d, verb, np_en(obj, "obj"), np_hi(obj), np_agr(obj), "hab", False, subj,
                                     (moon_en, adj[1]), extra_hi=["बहुत", "कम"]))


def moon_literal(d):
    """she saw a blue moon in the sky -> उसने आसमान में एक नीला चाँद देखा"""
    def in_the_sky(d, subj):
        d.feats["verb"] = "see"
        if not d.chance(0.5):
            return [], []
        d.feats["place"] = "sky"
        d.depth += 1
        return ["in", "the", "sky"], ["आसमान", "में"]
    return fixed_object(d, "blue_moon", "literal", "see", (["a", "blue", "moon"], ["एक", "नीला", "चाँद"], DEFAULT_AGR),
                        in_the_sky, 0.3, PAST_OR_FUTURE, negative_p=0.15)


def cat_idiom(d):
    """he let the cat out of the bag [to ravi] -> उसने [रवि को] राज़ बता दिया"""
    return fixed_object(d, "cat", "idiom", "let", (["the", "cat", "out", "of", "the", "bag"], ["राज़", "बता"], DEFAULT_AGR),
                        lambda d, subj: to_phrase(d, subj) if d.chance(0.45) else ([], []), 0.3, PAST_OR_FUTURE,
                        hindi_verb=("दे", "de"))


def cat_literal(d):
    """he let the cat out of the bag gently -> उसने बिल्ली को धीरे से थैले से बाहर निकाला"""
    subj, tense = person_reading(d, "cat", "literal", PAST_OR_FUTURE)
    manner = d.pick(list(MANNERS))
    cue(d, manner)
    t_en, t_hi = optional_time(d, tense, 0.3)
    return d.done(*transitive_clause(d, "let", ["the", "cat", "out", "of", "the", "bag", manner],
                                     ["बिल्ली", "को"] + MANNERS[manner] + ["थैले", "से", "बाहर"], DEFAULT_AGR, tense,
                                     False, subj, (t_en, t_hi)))


def ice_idiom(d):
    """he broke the ice at the party -> उसने पार्टी में बातचीत शुरू की (बातचीत: feminine)"""
    return fixed_object(d, "ice", "idiom", "break", (["the", "ice"], ["बातचीत", "शुरू"], ("f", "sg", 3)),
                        lambda d, subj: optional_event(d, 0.6, "at", ["party", "wedding", "meeting", "show", "class", "dinner"]),
                        0.25, hindi_verb=("कर", "kar"))


def ice_literal(d):
    """he broke the ice on the lake / with a hammer -> उसने झील पर / हथौड़े से बर्फ़ तोड़ी"""
    def on_water_or_with_tool(d, subj):
        if d.chance(0.5):
            key = d.pick(["river", "lake", "pond", "canal"])
            cue(d, key)
            np = noun(key)
            return ["on"] + np_en(np), np_hi(np, oblique=True) + ["पर"]
        tool = d.pick(["stick", "hammer", "stone"])
        cue(d, tool)
        return instrument_words((tool,))
    ice = ("f", "sg", 3)
    return fixed_object(d, "ice", "literal", "break", (["the", "ice"], ["बर्फ़"], ice), on_water_or_with_tool, 0.25,
                        PAST_OR_FUTURE, negative_p=0.15)
