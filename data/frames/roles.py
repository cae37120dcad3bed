# data/frames/roles.py — role freedom: each noun in every role its meaning allows (role clauses,
# animal intransitives, copulas with every kind of subject, locatives, opening and things' verbs).
from grammar import (DEFAULT_AGR, NOUNS, PREDICATE_ADJECTIVES, dative_hi, ke_hi, noun, np_agr, np_en, np_hi)
from .phrases import (EVENT_PLACES, GENERAL_PLACES, NEAR_PLACES, WATERS, adjuncts, copula_tenses, discard_if, person_np,
                      place_phrase, place_words, same_past_clash, tense_and_negation, with_subject)
from .arguments import (INSTRUMENTS, MANNERS, OWNER_DETS, conjuncts, coordinated, instrument_words, is_person,
                        manner, optional_time, owner_det, person_argument, plain_np, reflexive)
from .plain import copula_clause, intransitive_clause, predicate_adjective, transitive_clause

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
# verb -> (animals that may be its subject, the objects it takes ("person": people with को), weight)
ROLE_VERBS = {
    "eat": (["cat", "mouse_animal", "snake"], FOODS + ["piece_of_cake"], 3),
    "drink": (["cat"], DRINKS, 2),  # a cat drinks milk or water (see patient)
    "see": (["cat"], SEEABLE + ["person"], 3),
    "buy": ([], THINGS + DRINKS + ["piece_of_cake", "bat_cricket", "mouse_device"], 3),
    "cook": ([], ["egg", "vegetable", "bean"], 2),
    "wash": ([], WASHABLE, 2),
    "hit": ([], HITTABLE + ["person"], 3),
    "break": (["cat"], BREAKABLE, 3),
    "spill": (["cat"], DRINKS, 2),
    "catch": (["cat"], CATCHABLE + ["person"], 2),
    "keep": ([], KEEPABLE, 2),
    "call": ([], ["person"], 1),
    "give": ([], THINGS + DRINKS + FOODS, 2),
    "send": ([], ["book", "bag", "box", "watch", "toy", "doll", "shirt", "money", "cake"], 1),
    "show": ([], ["book", "bag", "box", "watch", "toy", "doll", "shirt", "car", "robot", "ball"], 1),
}
ROLE_VERB_LIST = [verb for verb, (_, _, weight) in ROLE_VERBS.items() for _ in range(weight)]
SPILL_PLACES = ["floor", "table", "carpet", "kitchen", "room", "floor"]
BENEFICIARY_VERBS = {"buy", "cook", "write", "wash"}
RECIPIENT_VERBS = {"give", "send", "show"}
# verbs that take company (with X -> X के साथ) in a clause without a beneficiary, and how often
COMPANION_VERBS = {"eat", "drink", "cook", "wash", "buy"}
COMPANION_P = 0.35
ANIMAL_PLACES = ["garden", "house", "room", "kitchen", "village", "field", "forest", "cave", "tree", "park"]


def agent(d, animals, p_animal=0.15, p_coord=0.12):
    """The subject of a clause: a person, an animal the verb allows, or two of them coordinated."""
    r = d.rng.random()
    if animals and r < p_animal:
        key = d.pick(animals)
        dets = ("the", "the", "a", "this", "that", "my", "our", "their") if key == "cat" else ("the", "the", "a", "this", "that")
        subj = plain_np(d, key, "subj", dets_sg=dets, dets_pl=("the", "the", "this", "that"), adj_p=0.1)
    elif r < p_animal + p_coord:
        subj = coordinated(d, "person", "person", "subj")
    else:
        subj = person_np(d)
    return with_subject(d, subj)


PIECE_OF_CAKE = {"kind": "fixed", "en": ["a", "piece", "of", "cake"], "hi": ["केक", "का", "एक", "टुकड़ा"]}


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
    """The object noun phrase of a role clause."""
    options = ROLE_VERBS[verb][1]
    if verb == "drink" and subj["kind"] == "noun" and subj["key"] == "cat":
        options = ["milk", "water"]
    key = d.pick(options)
    if key == "piece_of_cake":  # a piece of cake, literally
        d.feats["idiom"] = ("cake", "literal")
        return PIECE_OF_CAKE
    if key == "person":
        obj = person_argument(d, subj, "obj", coord_p=0.25, owner_p=0.35)
    elif verb in ("eat", "drink", "buy", "give", "wash", "break") and d.chance(0.12):
        other = d.pick([k for k in options if k not in ("person", "piece_of_cake", key)])
        obj = coordinated(d, key, other, "obj")
    else:
        obj = plain_np(d, key, "obj", owner_p=0.3 if "thing" in NOUNS[key][4] and verb != "buy" else 0.0, adj_p=0.15,
                       subj=subj)
    if key != "person":
        d.feats["object"] = key
    return reflexive(obj, subj)


def person_adjunct(d, subj, role, coord_p):
    """for X -> X के लिए (role "ben"; for ravi and priya -> रवि और प्रिया के लिए) or with X -> X के साथ
    (role "com", company; with her friend -> अपने दोस्त के साथ): a person, or two coordinated."""
    who = person_argument(d, subj, role, coord_p=coord_p, owner_p=0.35)
    d.depth += 1
    return who


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
    prep, post = place_words(key)
    return [prep] + np_en(np), np_hi(np, oblique=True) + [post]


def realize_role_clause(verb, subj, tense, negative, obj, to=None, tool=None, how=None, ben=None, loc=([], []),
                        adj=([], []), com=None):
    """English: S V O [loc] [to X] [with Y] [manner] [for X | with X] [adjuncts];
    Hindi: S(ने in the past) [time] [event] [place] [loc] [X को] [X के लिए | X के साथ] [Y से] [manner] O [नहीं] V.
    The perfective agrees with an unmarked object, the other tenses with the subject."""
    obj_en, obj_hi, obj_agr = object_words(verb, obj)
    to_en, to_hi = (["to"] + np_en(to, "obj"), dative_hi(to)) if to else ([], [])
    with_en, with_hi = instrument_words(tool) if tool else ([], [])
    m_en, m_hi = manner_words(how)
    for_en, for_words = (["for"] + np_en(ben, "obj"), ke_hi(ben, "लिए")) if ben else \
        (["with"] + np_en(com, "obj"), ke_hi(com, "साथ")) if com else ([], [])
    spill = verb == "spill"  # spill X -> X गिरा देना (a compound: role_clause never negates it)
    return transitive_clause(None, verb, obj_en, obj_hi, obj_agr, tense, negative, subj,
                             (loc[0] + to_en + with_en + m_en + for_en + adj[0],
                              adj[1] + loc[1] + to_hi + for_words + with_hi + m_hi),
                             extra_hi=["गिरा"] if spill else (), hindi_verb=("दे", "de") if spill else None)


def role_clause(d):
    """S V O with free roles: people and animals as subjects, every sensible object, coordination,
    recipients, beneficiaries, instruments and manner (see realize_role_clause)."""
    verb = d.pick(ROLE_VERB_LIST)
    subj = agent(d, ROLE_VERBS[verb][0])
    tense, negative = tense_and_negation(d, verb, negative_p=0 if verb == "spill" else 0.15)
    discard_if(same_past_clash(verb, tense, negative, np_agr(subj)))
    obj = patient(d, verb, subj)
    # a habit is not about one particular thing: they eat mangoes, not that mango
    discard_if(tense == "hab" and any(x["kind"] == "noun" and x["number"] == "sg" and x["det"] in ("a", "this", "that")
                                      and NOUNS[x["key"]][1] is not None for x in conjuncts(obj)))
    to = person_argument(d, subj, "rec", coord_p=0.3, owner_p=0.25) if verb in RECIPIENT_VERBS else None  # to X -> X को
    tool = None
    if verb == "hit" and d.chance(0.45):
        tool = (d.pick(list(INSTRUMENTS)),)
        if tool[0] == "bat":
            discard_if("sense" in d.feats)
            d.feats.update(sense=("bat", "cricket"), cue="hit")
        elif d.chance(0.2):  # with a stick and a stone -> डंडे और पत्थर से (never the ambiguous bat)
            tool += (d.pick([t for t in INSTRUMENTS if t not in ("bat",) + tool]),)
            d.feats["coord"] = d.feats.get("coord", ()) + ("tool",)
        d.feats["tool"] = tool[0]
        d.depth += 1
    ben = com = None
    if verb in BENEFICIARY_VERBS and d.chance(0.5):
        ben = person_adjunct(d, subj, "ben", coord_p=0.3)
    elif verb in COMPANION_VERBS and is_person(subj) and d.chance(COMPANION_P):
        com = person_adjunct(d, subj, "com", coord_p=0.4)  # people keep people company
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
    return d.done(*realize_role_clause(verb, subj, tense, negative, obj, to, tool, how, ben, loc, adj, com))


# animal -> intransitive verbs it does; people do them all
ANIMAL_INTRANSITIVE = {"cat": ["sleep", "run"], "snake": ["sleep", "swim"], "mouse_animal": ["sleep", "run"],
                       "bat_animal": ["sleep"]}


def role_intransitive(d):
    """Intransitives with people, animals and coordinations as subjects, and manner adverbs:
    the bats sleep in the cave -> चमगादड़ गुफा में सोते हैं; ravi and priya danced -> रवि और प्रिया नाचे."""
    verb = d.pick(["sleep", "laugh", "dance", "run", "swim", "cry", "sleep", "run"])
    animals = [a for a, vs in ANIMAL_INTRANSITIVE.items() if verb in vs]
    subj = agent(d, animals, p_animal=0.35, p_coord=0.2)
    tense, negative = tense_and_negation(d, verb, negative_p=0.15)
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
    return d.done(*intransitive_clause(verb, subj, tense, negative, m_en + adj[0], adj[1] + m_hi))


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
        adjective = d.pick(PREDICATE_ADJECTIVES)
    else:
        nouns, adjectives = COPULA_SUBJECTS[kind]
        key = d.pick(nouns)
        dets_sg = ("the", "the", "this", "that", "my", "our", "their") if kind in ("place", "animal") else ("the", "the", "this", "that")
        subj = plain_np(d, key, "subj", dets_sg=dets_sg, dets_pl=("the", "this", "that"), adj_p=0.0)
        adjective = d.pick(adjectives)
    with_subject(d, subj)
    tense, negative = tense_and_negation(d, "be", ["hab", "past", "fut"])
    lasting = adjective in ("big", "small", "new", "old_thing", "blue")  # no "the garden was big in the evening"
    adj = adjuncts(d, tense, place_keys=None, time_p=0.0 if lasting else 0.35, event_p=0.0 if lasting else 0.05)
    return d.done(*predicate_adjective(subj, tense, negative, adjective, adj))


LOCATIONS = {"person": GENERAL_PLACES + EVENT_PLACES + ["car"],
             "animal": ANIMAL_PLACES + ["table", "floor", "box", "bag", "car", "sack"],
             "thing": ["box", "bag", "car", "table", "floor", "room", "kitchen", "house", "office", "shop", "sack"]}
LOCATED_THINGS = ["book", "bag", "box", "watch", "ball", "toy", "doll", "shirt", "apple", "egg", "cake", "plate", "money"]


def locative(d):
    """X is in/on/near the Y -> X Y में/पर/के पास है: रवि बगीचे में है, किताब थैले में थी."""
    r = d.rng.random()
    if r < 0.45:
        kind, subj = "person", person_np(d) if d.chance(0.8) else coordinated(d, "person", "person", "subj")
    elif r < 0.65:
        kind, subj = "animal", plain_np(d, d.pick(["cat", "snake"]), "subj", adj_p=0.1)
    else:
        kind, subj = "thing", plain_np(d, d.pick(LOCATED_THINGS), "subj", dets_sg=("the", "the", "this", "that", "my", "our"),
                                       adj_p=0.1)
    with_subject(d, subj)
    tense, negative = tense_and_negation(d, "be", copula_tenses(np_agr(subj)), 0.15)
    near = kind != "thing" and d.chance(0.2)
    key = d.pick(NEAR_PLACES if near else [k for k in LOCATIONS[kind] if not (subj["kind"] == "noun" and subj["key"] == k)])
    d.feats["place"] = key
    if key in ("box", "bag", "car", "sack") and not near:
        l_en, l_hi = container_phrase(d, key, subj)
    else:
        l_en, l_hi = place_phrase(d, key, "on" if key in ("table", "floor", "tree") else None, adj_p=0.1, near=near)
    d.depth += 1
    t_en, t_hi = optional_time(d, tense, 0.3)
    return d.done(*copula_clause(subj, tense, negative, l_en + t_en, t_hi, l_hi))


def opens(d):
    """the bank opens in the morning -> बैंक सुबह खुलता है; the shop closed -> दुकान बंद हुई."""
    key = d.pick(["bank_money", "shop", "market", "school", "office", "door"])
    subj = with_subject(d, noun(key, "sg", "the" if key == "bank_money" else d.pick(["the", "the", "this", "that"])))
    verb = d.pick(["open", "close"])
    if key == "bank_money":
        d.feats.update(sense=("bank", "money"), cue=verb)
    tense, negative = tense_and_negation(d, verb, negative_p=0.15)
    adj = adjuncts(d, tense, place_keys=None, time_p=0.55, event_p=0.12)
    closed = ["बंद"] if verb == "close" else []  # close -> बंद होना: बंद, then होना conjugated (नहीं between)
    return d.done(*intransitive_clause(verb, subj, tense, negative, adj[0], adj[1] + closed))


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
    subj = with_subject(d, noun(key, number, det))
    tense, negative = tense_and_negation(d, verb, ["hab", "hab", "prog", "fut"], 0.15)
    p_en, p_hi = [], []
    if d.chance(0.7):
        near = verb == "flow" and (not places or d.chance(0.4))
        place = d.pick([p for p in NEAR_PLACES if p != key and p not in INDOORS] if near else places)
        d.feats["place"] = place
        p_en, p_hi = (["in", "the", "sky"], ["आसमान", "में"]) if place == "sky" and not near else place_phrase(d, place, adj_p=0.1, near=near)
        d.depth += 1
    t_en, t_hi = optional_time(d, tense, 0.3)
    return d.done(*intransitive_clause(verb, subj, tense, negative, p_en + t_en, t_hi + p_hi))
