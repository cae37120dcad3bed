# data/frames/arguments.py — the arguments the clause families share: possessives and rule 17
# (a possessive that refers to the subject is अपना), coordinated noun phrases, reflexives, person
# objects and recipients, manners and instruments.
from grammar import (DRINK_ADJECTIVES, NOUNS, THING_ADJECTIVES, coord, dative_hi, noun, np_agr, np_en,
                     refers_to_subject)
from .phrases import POSSESSABLE, discard_if, note_role, np_key, optional_adjective, person_np, time_phrase


def conjuncts(np):
    return np["items"] if np["kind"] == "coord" else [np]


def record_pair(d, subj, other):
    """Names acting on names (conjuncts included): role_swap holds some ordered pairs out."""
    for a in conjuncts(subj):
        for b in conjuncts(other):
            if a["kind"] == "name" and b["kind"] == "name":
                d.feats.setdefault("pair", (a["key"], b["key"]))
                d.feats.setdefault("pairs", []).append((a["key"], b["key"]))


def optional_time(d, tense, p=0.3, allowed=None):
    if d.chance(p):
        d.depth += 1
        return time_phrase(d, tense, allowed)
    return [], []


INSTRUMENTS = {"stick": ("डंडे",), "bat": ("बल्ले",), "hammer": ("हथौड़े",), "shoe": ("जूते",), "stone": ("पत्थर",)}


def instrument_words(tools):
    """with a stick -> डंडे से; with a stick and a stone -> डंडे और पत्थर से (oblique, से once)."""
    en, hi = ["with"], []
    for i, t in enumerate(tools):
        en += (["and"] if i else []) + ["a", t]
        hi += (["और"] if i else []) + [INSTRUMENTS[t][0]]
    return en, hi + ["से"]


MANNERS = {"gently": ["धीरे", "से"], "carefully": ["ध्यान", "से"], "quickly": ["जल्दी", "से"]}
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
    pool = (DRINK_ADJECTIVES if "drink" in entry[4] else THING_ADJECTIVES if key in ("bat_cricket", "mouse_device")
            else ["big", "small"] if "animal" in entry[4] or key in SENSE_OF
            else [] if "sky" in entry[4] else THING_ADJECTIVES)
    adjs = optional_adjective(d, pool, adj_p)
    if key in SENSE_OF:
        d.feats["sense"] = SENSE_OF[key]
        d.feats.setdefault("cue", "verb")
    return note_role(d, noun(key, number, det, adjs), role)


def conjunct(d, kind, role):
    """One conjunct of X and Y: a name or a noun phrase (no pronouns).  role is "subj" or the
    position of the coordination ("obj", "rec", "ben"), recorded for the lexical splits as "obj"."""
    role = "subj" if role == "subj" else "obj"
    if kind == "person":
        return person_np(d, allow_pronoun=False, adj_p=0.1, role=role)
    return plain_np(d, kind, role, adj_p=0.1)


def coordinated(d, kind_a, kind_b, role):
    """X and Y (see conjunct); the draw is discarded when X and Y are the same."""
    a, b = conjunct(d, kind_a, role), conjunct(d, kind_b, role)
    discard_if(np_key(a) == np_key(b) or (a["kind"] == "noun" and b["kind"] == "noun" and a["key"] == b["key"]))
    d.feats["coord"] = d.feats.get("coord", ()) + (role,)
    return coord(a, b)


def reflexive(np, subj):
    """his shirt after a subject he -> अपनी कमीज़ (see grammar.refers_to_subject); only a person
    subject owns things (a snake is in his box -> उसके डिब्बे में)."""
    for x in conjuncts(np):
        if x["kind"] == "noun":
            x["reflexive"] = is_person(subj) and refers_to_subject(x["det"], np_agr(subj))
    return np


def distinct(a, b):
    """Two noun phrases that are not the same person (and not two pronouns)."""
    shared = {np_key(x) for x in conjuncts(a)} & {np_key(x) for x in conjuncts(b)}
    return not shared and not (a["kind"] == "pron" and b["kind"] == "pron")


def is_person(np):
    return all(x["kind"] in ("pron", "name") or "person" in NOUNS[x["key"]][4] for x in conjuncts(np))


def person_argument(d, subj, role, coord_p, owner_p):
    """A person as object ("obj"), recipient ("rec") or beneficiary ("ben"): one person (a
    possessive on a noun with probability owner_p) or two coordinated (coord_p); the draw is discarded
    when it would be the subject itself.  Names acting on names are recorded; अपना where it refers back."""
    if d.chance(coord_p):
        who = coordinated(d, "person", "person", role)
    else:
        who = person_np(d, role="obj", adj_p=0.1)
        if owner_p and who["kind"] == "noun" and who["key"] in POSSESSABLE and d.chance(owner_p):
            who["det"] = owner_det(d, subj)
    discard_if(not distinct(subj, who))
    record_pair(d, subj, who)
    return reflexive(who, subj)


def to_phrase(d, subj, adj_p=0.1):
    """to X -> X को outside the role clauses: one person with no possessive, as (English, Hindi); the
    draw is discarded when it is the subject (or both are pronouns).  Names acting on names are recorded."""
    who = person_np(d, role="obj", allow_possessive=False, adj_p=adj_p)
    discard_if(not distinct(subj, who))
    record_pair(d, subj, who)
    return ["to"] + np_en(who, "obj"), dative_hi(who)


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
