# data/frames/ — the clause types of the corpus, each drawn from a random.Random and realised
# through data/grammar.py. Every draw returns the English, the Hindi and the choices that
# data/make_idioms.py's splits use. The families live in one module each, below this table:
# phrases < arguments < plain < idioms < senses < roles (each imports only those to its left).
# Some names are imported here only for data/make_idioms.py and tests/test_grammar.py (frames.X).
from .phrases import (Discard, Draw, EVENT_PLACES, GENERAL_PLACES, MASS_DETS, NEAR_PLACES, OBJECT_DETS_PL,
                      OBJECT_DETS_SG, PERSON_NOUNS, POSSESSABLE, SIMPLE_TIMES, SUBJECT_DETS_PL,
                      SUBJECT_DETS_SG, SURFACES, SURFACE_OBJECTS, TENSES, verb_tenses)
from .arguments import OWN_P, owner_det, reflexive, subject_possessive
from .plain import (TRANSITIVE, copula_person, copula_thing, ditransitive, intransitive, meet, person_object,
                    plain_transitive, transitive_clause)
from . import idioms
from .senses import bank, bank_short, bat_or_mouse, lamp, letter, thing_intransitive
from .roles import (CATCHABLE, PIECE_OF_CAKE, ROLE_VERBS, copula_other, locative, opens, realize_role_clause,
                    role_clause, role_intransitive, thing_verb)

# The 12 idioms of idioms.py in the order of FRAMES: each has the frames KEY_idiom and KEY_literal,
# drawn by the function of that name, of weight 2 (the literal weather 1).
IDIOMS = ["cake", "leg", "spill", "feet", "weather", "sack", "books", "hot", "arm", "moon", "cat", "ice"]


def discarding(frame):
    """The frame's function, giving None where the draw is discarded (Discard)."""
    def draw_or_none(d):
        try:
            return frame(d)
        except Discard:
            return None
    return draw_or_none


# name -> (draw function, weight)
FRAMES = {name: (discarding(function), weight) for name, (function, weight) in {
    "transitive": (plain_transitive, 12), "person_object": (person_object, 5), "meet": (meet, 4),
    "ditransitive": (ditransitive, 7), "intransitive": (intransitive, 7),
    "copula_person": (copula_person, 4), "copula_thing": (copula_thing, 4),
    **{f"{key}_{reading}": (getattr(idioms, f"{key}_{reading}"), 1 if (key, reading) == ("weather", "literal") else 2)
       for key in IDIOMS for reading in ("idiom", "literal")},
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
}.items()}


def draw(rng, frame):
    """One sentence of the named frame, or None when the draw hit a combination the grammar avoids."""
    return FRAMES[frame][0](Draw(rng, frame))
