# Deterministic generator for the toy English->Hindi idiom / word-sense dataset
# (data/idioms/{train,valid,test}.tsv, "english<TAB>hindi"); see data/README.md.
"""Run from the repo root:  python3 data/make_idioms.py

Standard library only.  All randomness comes from random.Random(1234) and every
loop runs over lists, so the output is byte-identical on every run.  The script
checks the data (lengths, duplicates, held-out tokens seen in train, ...) and
exits non-zero if any check fails.
"""
import os
import random
import sys
import unicodedata

SEED = 1234
MAX_EN = 10
MAX_HI = 12
OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "idioms")

# ---------------------------------------------------------------------------
# Subjects.  Hindi needs gender (m/f) and number (sg/pl); "i" and "we" are
# treated as masculine, "they" as masculine plural.
#   key / english subject, english object form, person, gender, number,
#   Hindi nominative, Hindi ergative (with ne), Hindi possessive base
#   (possessive + a/e/i ending is chosen by the possessed noun).
# ---------------------------------------------------------------------------
SUBJECTS = [
    # en         obj        p  g    n     nom         erg             poss (का, के, की)
    ("he",        "him",     3, "m", "sg", "वह",       "उसने",         ("उसका", "उसके", "उसकी")),
    ("she",       "her",     3, "f", "sg", "वह",       "उसने",         ("उसका", "उसके", "उसकी")),
    ("they",      "them",    3, "m", "pl", "वे",       "उन्होंने",      ("उनका", "उनके", "उनकी")),
    ("i",         "me",      1, "m", "sg", "मैं",       "मैंने",         ("मेरा", "मेरे", "मेरी")),
    ("we",        "us",      1, "m", "pl", "हम",       "हमने",         ("हमारा", "हमारे", "हमारी")),
    ("ravi",      "ravi",    3, "m", "sg", "रवि",      "रवि ने",       ("रवि का", "रवि के", "रवि की")),
    ("priya",     "priya",   3, "f", "sg", "प्रिया",     "प्रिया ने",     ("प्रिया का", "प्रिया के", "प्रिया की")),
    ("amit",      "amit",    3, "m", "sg", "अमित",     "अमित ने",      ("अमित का", "अमित के", "अमित की")),
    ("neha",      "neha",    3, "f", "sg", "नेहा",      "नेहा ने",       ("नेहा का", "नेहा के", "नेहा की")),
    ("the boy",   "the boy", 3, "m", "sg", "लड़का",     "लड़के ने",      ("लड़के का", "लड़के के", "लड़के की")),
    ("the girl",  "the girl", 3, "f", "sg", "लड़की",    "लड़की ने",      ("लड़की का", "लड़की के", "लड़की की")),
    ("the boys",  "the boys", 3, "m", "pl", "लड़के",    "लड़कों ने",     ("लड़कों का", "लड़कों के", "लड़कों की")),
    ("the girls", "the girls", 3, "f", "pl", "लड़कियाँ", "लड़कियों ने",   ("लड़कियों का", "लड़कियों के", "लड़कियों की")),
]
SINGLE_TOKEN_SUBJECTS = [s for s in SUBJECTS if " " not in s[0]]
SINGULAR_SUBJECTS = [s for s in SUBJECTS if s[4] == "sg"]


def en(s):
    return s[0]


def en_obj(s):
    return s[1]


def third_sg(s):
    return s[2] == 3 and s[4] == "sg"


def gn_index(s):
    """0 = m sg, 1 = f sg, 2 = m pl, 3 = f pl"""
    return {"msg": 0, "fsg": 1, "mpl": 2, "fpl": 3}[s[3] + s[4]]


def nom(s):
    return s[5]


def erg(s):
    return s[6]


def poss(s, ending):
    return s[7]["a e i".split().index(ending)]


def en_be_pres(s):
    if s[0] == "i":
        return "am"
    return "is" if third_sg(s) else "are"


def en_be_past(s):
    return "was" if (third_sg(s) or s[0] == "i") else "were"


def en_verb_pres(s, base, third):
    return third if third_sg(s) else base


def hi_aux_pres(s):
    if s[0] == "i":
        return "हूँ"
    return "है" if s[4] == "sg" else "हैं"


def hi_aux_past(s):
    return ["था", "थी", "थे", "थीं"][gn_index(s)]


def hab(stem, s):
    """habitual participle: stem + ता/ती/ते/ती"""
    return stem + ["ता", "ती", "ते", "ती"][gn_index(s)]


def perf(forms, s):
    """forms = (m sg, f sg, m pl, f pl)"""
    return forms[gn_index(s)]


GAYA = ("गया", "गई", "गए", "गईं")
CHALA = ("चला", "चली", "चले", "चली")
BAITHA = ("बैठा", "बैठी", "बैठे", "बैठीं")
SOYA = ("सोया", "सोई", "सोए", "सोईं")
KHELA = ("खेला", "खेली", "खेले", "खेलीं")
TAHLA = ("टहला", "टहली", "टहले", "टहलीं")

# ---------------------------------------------------------------------------
# Frames.  Each frame yields (english, hindi, attrs).  `keys` names the attrs
# that make up one cell of the frame's grid (for example subject x context);
# test holds out single cells (see PINNED / choose_holdout below).  "sense" is "idiom",
# "literal" or a word sense; a row may override it with attrs["sense"].
# ---------------------------------------------------------------------------
FRAMES = []


def frame(name, item, sense, keys):
    def deco(fn):
        FRAMES.append((name, item, sense, keys, fn))
        return fn
    return deco


def J(*parts):
    return " ".join(p for p in parts if p)


def agr(g, n, forms):
    return forms[{"msg": 0, "fsg": 1, "mpl": 2, "fpl": 3}[g + n]]


# Shared event nouns: english -> (hindi, gender).  All are invariant in the
# oblique case, so "X से पहले", "X के बाद", "X में", "X का राज़" need no change.
EVENT = {
    "exam": ("परीक्षा", "f"), "test": ("टेस्ट", "m"), "interview": ("इंटरव्यू", "m"),
    "show": ("शो", "m"), "play": ("नाटक", "m"), "match": ("मैच", "m"),
    "wedding": ("शादी", "f"), "speech": ("भाषण", "m"), "party": ("पार्टी", "f"),
    "meeting": ("बैठक", "f"), "movie": ("फ़िल्म", "f"), "trip": ("यात्रा", "f"),
    "class": ("क्लास", "f"), "homework": ("होमवर्क", "m"), "puzzle": ("पहेली", "f"),
    "plan": ("योजना", "f"), "gift": ("तोहफ़े", "m"),  # तोहफ़ा, oblique तोहफ़े
}


def before(e):
    return ("before the " + e, EVENT[e][0] + " से पहले", e)


def after(e):
    return ("after the " + e, EVENT[e][0] + " के बाद", e)


# --- 1. piece of cake ------------------------------------------------------
EASY_THINGS = ["exam", "test", "homework", "match", "puzzle", "interview", "speech", "class"]
EASY_FOR = ["exam", "test", "homework", "puzzle", "interview", "speech"]


@frame("cake_idiom", "piece of cake", "idiom", ("thing", "tense"))
def _():
    for e in EASY_THINGS:
        h, g = EVENT[e]
        for tense in ["past", "pres"]:
            be = "was" if tense == "past" else "is"
            aux = agr(g, "sg", ("था", "थी", "थे", "थीं")) if tense == "past" else "है"
            yield (J("the", e, be, "a piece of cake"), J(h, "बहुत आसान", aux),
                   {"thing": e, "tense": tense})


@frame("cake_idiom_for", "piece of cake", "idiom", ("subj", "thing"))
def _():
    for e in EASY_FOR:
        h, g = EVENT[e]
        for s in SUBJECTS:
            aux = agr(g, "sg", ("था", "थी", "थे", "थीं"))
            yield (J("the", e, "was a piece of cake for", en_obj(s)),
                   J(h, poss(s, "e"), "लिए बहुत आसान", aux),
                   {"thing": e, "subj": en(s)})


@frame("cake_literal", "piece of cake", "literal", ("subj", "verb", "tense"))
def _():
    verbs = [("ate", "eat", "eats", "खाया", "खा"),
             ("took", "take", "takes", "लिया", "ले"),
             ("bought", "buy", "buys", "खरीदा", "खरीद")]
    for s in SUBJECTS:
        for past, base, third, hi_past, stem in verbs:
            yield (J(en(s), past, "a piece of cake"),
                   J(erg(s), "केक का एक टुकड़ा", hi_past),
                   {"subj": en(s), "verb": base, "tense": "past"})
            yield (J(en(s), en_verb_pres(s, base, third), "a piece of cake"),
                   J(nom(s), "केक का एक टुकड़ा", hab(stem, s), hi_aux_pres(s)),
                   {"subj": en(s), "verb": base, "tense": "pres"})


# --- 2. break a leg ---------------------------------------------------------
LEG_EVENTS = ["show", "play", "match", "exam", "interview", "speech", "test"]


@frame("leg_idiom", "break a leg", "idiom", ("subj", "ctx"))
def _():
    for s in SUBJECTS:
        for e in LEG_EVENTS:
            yield (J(en(s), "said break a leg before the", e),
                   J(erg(s), EVENT[e][0], "से पहले शुभकामनाएँ दीं"),
                   {"subj": en(s), "ctx": e})


@frame("leg_idiom_imp", "break a leg", "idiom", ("ctx",))
def _():
    for e in LEG_EVENTS:
        yield (J("break a leg in the", e), J(EVENT[e][0], "के लिए शुभकामनाएँ"), {"ctx": e})


@frame("leg_literal", "break a leg", "literal", ("subj", "ctx"))
def _():
    ctxs = [before(e) for e in ["show", "match", "play", "wedding", "trip", "party"]]
    ctxs += [("in the accident", "दुर्घटना में", "accident"),
             ("on the stairs", "सीढ़ियों पर", "stairs")]
    for s in SINGULAR_SUBJECTS:  # "the girls broke a leg" is not natural English
        for e, h, c in ctxs:
            yield (J(en(s), "broke a leg", e), J(poss(s, "i"), "टांग", h, "टूट गई"),
                   {"subj": en(s), "ctx": c})


# --- 3. spill the beans -----------------------------------------------------
@frame("beans_idiom", "spill the beans", "idiom", ("subj", "ctx"))
def _():
    secrets = ["party", "plan", "gift", "wedding", "trip", "exam", "test", "interview",
               "movie", "match"]
    for s in SUBJECTS:
        for e in secrets:
            yield (J(en(s), "spilled the beans about the", e),
                   J(erg(s), EVENT[e][0], "का राज़ खोल दिया"), {"subj": en(s), "ctx": e})


@frame("beans_idiom_always", "spill the beans", "idiom", ("subj",))
def _():
    for s in SUBJECTS:
        yield (J(en(s), "always", en_verb_pres(s, "spill", "spills"), "the beans"),
               J(nom(s), "हमेशा राज़ खोल", hab("दे", s), hi_aux_pres(s)), {"subj": en(s)})


SPILL_PLACES = [("on the floor", "फ़र्श पर"), ("on the table", "मेज़ पर"),
                ("on the carpet", "कालीन पर"), ("on the road", "सड़क पर"),
                ("on the stairs", "सीढ़ियों पर"), ("in the kitchen", "रसोई में"),
                ("in the garden", "बगीचे में"), ("in the room", "कमरे में")]


@frame("beans_literal", "spill the beans", "literal", ("subj", "ctx"))
def _():
    for s in SUBJECTS:
        for e, h in SPILL_PLACES:
            yield (J(en(s), "spilled the beans", e), J(erg(s), h, "फलियाँ गिरा दीं"),
                   {"subj": en(s), "ctx": e.split()[-1]})


@frame("beans_literal_always", "spill the beans", "literal", ("subj", "ctx"))
def _():
    for s in SUBJECTS:
        for e, h in SPILL_PLACES[:3]:
            yield (J(en(s), "always", en_verb_pres(s, "spill", "spills"), "the beans", e),
                   J(nom(s), "हमेशा", h, "फलियाँ गिरा", hab("दे", s), hi_aux_pres(s)),
                   {"subj": en(s), "ctx": e.split()[-1]})


# --- 4. cold feet -----------------------------------------------------------
@frame("feet_idiom", "cold feet", "idiom", ("subj", "ctx"))
def _():
    ctxs = ["wedding", "exam", "interview", "show", "match", "speech", "test", "play",
            "party", "meeting", "trip"]
    for s in SUBJECTS:
        for e in ctxs:
            yield (J(en(s), "got cold feet before the", e),
                   J(nom(s), EVENT[e][0], "से पहले घबरा", perf(GAYA, s)), {"subj": en(s), "ctx": e})


@frame("feet_literal", "cold feet", "literal", ("subj", "ctx"))
def _():
    ctxs = [("snow", "बर्फ़"), ("rain", "बारिश"), ("river", "नदी"), ("winter", "सर्दियों"),
            ("lake", "झील"), ("pond", "तालाब")]
    for s in SUBJECTS:
        for e, h in ctxs:
            yield (J(en(s), "got cold feet in the", e),
                   J(poss(s, "e"), "पैर", h, "में ठंडे हो गए"), {"subj": en(s), "ctx": e})


# --- 5. under the weather ---------------------------------------------------
TIMES = [("today", "आज", "pres"), ("yesterday", "कल", "past"),
         ("this morning", "आज सुबह", "past"), ("last week", "पिछले हफ़्ते", "past"),
         ("last night", "कल रात", "past")]


@frame("weather_idiom", "under the weather", "idiom", ("subj", "time"))
def _():
    for s in SUBJECTS:
        for e, h, tense in TIMES:
            be = en_be_pres(s) if tense == "pres" else en_be_past(s)
            aux = "है" if tense == "pres" else "थी"
            yield (J(en(s), be, "under the weather", e),
                   J(poss(s, "i"), "तबीयत", h, "ठीक नहीं", aux), {"subj": en(s), "time": e})


@frame("weather_literal", "under the weather", "literal", ("adj", "time"))
def _():
    adjs = [("cold", "ठंडा"), ("hot", "गर्म"), ("bad", "खराब"), ("good", "अच्छा"),
            ("pleasant", "सुहावना")]
    for ea, ha in adjs:
        for e, h, tense in TIMES:
            be, aux = ("is", "है") if tense == "pres" else ("was", "था")
            yield (J("the weather", be, ea, e), J("मौसम", h, ha, aux), {"adj": ea, "time": e})


# --- 6/7. hit the sack / hit the books -------------------------------------
HIT_WITH = [("stick", "डंडे"), ("bat", "बल्ले"), ("hammer", "हथौड़े"), ("shoe", "जूते"),
            ("stone", "पत्थर")]


@frame("sack_idiom", "hit the sack", "idiom", ("subj", "ctx"))
def _():
    ctxs = [("early", "जल्दी", "early"), ("after dinner", "खाने के बाद", "dinner"),
            ("at ten", "दस बजे", "ten")]
    ctxs += [after(e) for e in ["movie", "match", "party", "show", "wedding", "meeting",
                                "play", "trip"]]
    for s in SUBJECTS:
        for e, h, c in ctxs:
            yield (J(en(s), "hit the sack", e), J(nom(s), h, "सोने", perf(CHALA, s), perf(GAYA, s)),
                   {"subj": en(s), "ctx": c})


@frame("sack_literal", "hit the sack", "literal", ("subj", "ctx"))
def _():
    for s in SUBJECTS:
        for e, h in HIT_WITH:
            yield (J(en(s), "hit the sack with a", e), J(erg(s), h, "से बोरे को मारा"),
                   {"subj": en(s), "ctx": e})


@frame("books_idiom", "hit the books", "idiom", ("subj", "ctx"))
def _():
    ctxs = [before(e) for e in ["exam", "test", "interview", "class", "speech"]]
    ctxs += [("after dinner", "खाने के बाद", "dinner")]
    ctxs += [after(e) for e in ["movie", "party", "match", "meeting"]]
    for s in SUBJECTS:
        for e, h, c in ctxs:
            yield (J(en(s), "hit the books", e), J(erg(s), h, "मन लगाकर पढ़ाई की"),
                   {"subj": en(s), "ctx": c})


@frame("books_literal", "hit the books", "literal", ("subj", "ctx"))
def _():
    for s in SUBJECTS:
        for e, h in HIT_WITH:
            yield (J(en(s), "hit the books with a", e), J(erg(s), h, "से किताबों को मारा"),
                   {"subj": en(s), "ctx": e})


# --- 8. in hot water --------------------------------------------------------
@frame("hot_idiom", "in hot water", "idiom", ("subj", "ctx"))
def _():
    ctxs = [("lie", "झूठ"), ("mistake", "गलती"), ("fight", "लड़ाई"), ("joke", "मज़ाक"),
            ("party", "पार्टी"), ("exam", "परीक्षा"), ("match", "मैच"), ("trip", "यात्रा")]
    for s in SUBJECTS:
        for tense in ["pres", "past"]:
            for e, h in ctxs:
                be = en_be_pres(s) if tense == "pres" else en_be_past(s)
                aux = hi_aux_pres(s) if tense == "pres" else hi_aux_past(s)
                yield (J(en(s), be, "in hot water because of the", e),
                       J(nom(s), h, "की वजह से मुसीबत में", aux),
                       {"subj": en(s), "ctx": e, "tense": tense})


@frame("hot_literal", "in hot water", "literal", ("subj", "obj"))
def _():
    objs = [("clothes", "कपड़े", "धोए"), ("plates", "प्लेटें", "धोईं"), ("cup", "कप", "धोया"),
            ("shirt", "कमीज़", "धोई"), ("rice", "चावल", "धोए")]
    for s in SUBJECTS:
        for e, h, v in objs:
            yield (J(en(s), "washed the", e, "in hot water"), J(erg(s), h, "गर्म पानी में", v),
                   {"subj": en(s), "obj": e})


@frame("hot_literal_be", "in hot water", "literal", ("obj", "tense"))
def _():
    objs = [("clothes", "कपड़े", "m", "pl"), ("cup", "कप", "m", "sg"),
            ("plates", "प्लेटें", "f", "pl"), ("shirt", "कमीज़", "f", "sg")]
    for e, h, g, n in objs:
        for tense in ["pres", "past"]:
            if tense == "pres":
                be, aux = ("is", "है") if n == "sg" else ("are", "हैं")
            else:
                be, aux = ("was" if n == "sg" else "were"), agr(g, n, ("था", "थी", "थे", "थीं"))
            yield (J("the", e, be, "in hot water"), J(h, "गर्म पानी में", aux),
                   {"obj": e, "tense": tense})


# --- 9. cost an arm and a leg -----------------------------------------------
PRICEY = [  # english, hindi nominative, hindi oblique, gender, number
    ("car", "कार", "कार", "f", "sg"), ("phone", "फ़ोन", "फ़ोन", "m", "sg"),
    ("watch", "घड़ी", "घड़ी", "f", "sg"), ("doll", "गुड़िया", "गुड़िया", "f", "sg"),
    ("robot", "रोबोट", "रोबोट", "m", "sg"), ("statue", "मूर्ति", "मूर्ति", "f", "sg"),
    ("puppet", "कठपुतली", "कठपुतली", "f", "sg"), ("shoes", "जूते", "जूतों", "m", "pl"),
    ("toy", "खिलौना", "खिलौने", "m", "sg"),
]
BROKEN_TOYS = ["doll", "robot", "statue", "puppet", "toy"]


@frame("arm_idiom", "cost an arm and a leg", "idiom", ("obj", "tense"))
def _():
    for e, h, _o, g, n in PRICEY:
        adj = agr(g, n, ("महंगा", "महंगी", "महंगे", "महंगी"))
        yield (J("the", e, "cost an arm and a leg"),
               J(h, "बहुत", adj, agr(g, n, ("था", "थी", "थे", "थीं"))), {"obj": e, "tense": "past"})
        if n == "sg":  # "the shoes cost" would be ambiguous between present and past
            yield (J("the", e, "costs an arm and a leg"), J(h, "बहुत", adj, "है"),
                   {"obj": e, "tense": "pres"})
        yield (J("the", e, "will cost an arm and a leg"),
               J(h, "बहुत", adj, agr(g, n, ("होगा", "होगी", "होंगे", "होंगी"))),
               {"obj": e, "tense": "fut"})


OWNERS = [  # english possessive, subject whose Hindi possessive is used
    ("my", "i"), ("his", "he"), ("her", "she"), ("our", "we"), ("their", "they")]


@frame("arm_idiom_owner", "cost an arm and a leg", "idiom", ("owner", "obj"))
def _():
    subj = dict((en(s), s) for s in SUBJECTS)
    for eo, key in OWNERS:
        for e, h, _o, g, n in PRICEY:
            ending = agr(g, n, ("a", "i", "e", "i"))
            yield (J(eo, e, "cost an arm and a leg"),
                   J(poss(subj[key], ending), h, "बहुत", agr(g, n, ("महंगा", "महंगी", "महंगे", "महंगी")),
                     agr(g, n, ("था", "थी", "थे", "थीं"))),
                   {"owner": eo, "obj": e})


@frame("arm_literal", "cost an arm and a leg", "literal", ("owner", "obj"))
def _():
    subj = dict((en(s), s) for s in SUBJECTS)
    for eo, key in [("the", None)] + OWNERS:
        for e, _h, o, g, n in PRICEY:
            if e in BROKEN_TOYS:  # all singular; before "का" the noun and a masculine
                # possessive take the oblique case: "मेरे खिलौने का", "मेरी गुड़िया का"
                owner = poss(subj[key], "i" if g == "f" else "e") if key else ""
                yield (J(eo, e, "lost an arm and a leg"),
                       J(owner, o, "का एक हाथ और एक टांग टूट गए"), {"owner": eo, "obj": e})


# --- 10. once in a blue moon --------------------------------------------------
@frame("moon_idiom", "once in a blue moon", "idiom", ("subj", "verb"))
def _():
    verbs = [("cook", "cooks", "खाना", "बना"), ("smile", "smiles", "", "मुस्कुरा"),
             ("call", "calls", "फ़ोन", "कर"), ("dance", "dances", "", "नाच"),
             ("sing", "sings", "", "गा"), ("laugh", "laughs", "", "हँस")]
    for s in SUBJECTS:
        for base, third, obj, stem in verbs:
            yield (J(en(s), en_verb_pres(s, base, third), "once in a blue moon"),
                   J(nom(s), "बहुत कम", obj, hab(stem, s), hi_aux_pres(s)),
                   {"subj": en(s), "verb": base})


@frame("moon_literal", "once in a blue moon", "literal", ("subj", "ctx"))
def _():
    ctxs = [("in the sky", "आसमान में"), ("last night", "कल रात"),
            ("from the roof", "छत से"), ("from the window", "खिड़की से"), ("once", "एक बार")]
    for s in SUBJECTS:
        for e, h in ctxs:
            yield (J(en(s), "saw a blue moon", e), J(erg(s), h, "एक नीला चाँद देखा"),
                   {"subj": en(s), "ctx": e.split()[-1]})


# --- 11. let the cat out of the bag -----------------------------------------
@frame("cat_idiom", "let the cat out of the bag", "idiom", ("subj", "ctx"))
def _():
    targets = [("", ""), ("yesterday", "कल"), ("to ravi", "रवि को"), ("to priya", "प्रिया को"),
               ("to amit", "अमित को"), ("to neha", "नेहा को"), ("to everyone", "सबको")]
    for s in SUBJECTS:
        for e, h in targets:
            if e.split()[-1:] == [en(s)] or (e.startswith("to ") and " " in en(s)):
                continue  # "to X" only after a one-word subject (<= 10 tokens)
            yield (J(en(s), "let the cat out of the bag", e),
                   J(erg(s), h, "राज़ बता दिया"), {"subj": en(s), "ctx": e.split()[-1] if e else "none"})


@frame("cat_literal", "let the cat out of the bag", "literal", ("subj", "ctx"))
def _():
    manners = [("gently", "धीरे से"), ("carefully", "ध्यान से"), ("quickly", "जल्दी से"),
               ("slowly", "धीरे धीरे"), ("safely", "सुरक्षित")]
    for s in SUBJECTS:
        for e, h in manners:
            yield (J(en(s), "let the cat out of the bag", e),
                   J(erg(s), "बिल्ली को", h, "थैले से बाहर निकाला"), {"subj": en(s), "ctx": e})


# --- 12. break the ice --------------------------------------------------------
@frame("ice_idiom", "break the ice", "idiom", ("subj", "ctx"))
def _():
    ctxs = ["party", "meeting", "wedding", "match", "show", "interview"]
    for s in SUBJECTS:
        for e in ctxs:
            yield (J(en(s), "broke the ice at the", e), J(erg(s), EVENT[e][0], "में बातचीत शुरू की"),
                   {"subj": en(s), "ctx": e})


@frame("ice_literal", "break the ice", "literal", ("subj", "ctx"))
def _():
    ctxs = [("on the lake", "झील पर"), ("on the pond", "तालाब पर"), ("on the river", "नदी पर"),
            ("with a hammer", "हथौड़े से"), ("with a stick", "डंडे से"), ("with a stone", "पत्थर से")]
    for s in SUBJECTS:
        for e, h in ctxs:
            yield (J(en(s), "broke the ice", e), J(erg(s), h, "बर्फ़ तोड़ी"),
                   {"subj": en(s), "ctx": e.split()[-1]})


# --- word sense: bank ---------------------------------------------------------
@frame("bank_money_went", "bank", "money", ("subj", "ctx"))
def _():
    purposes = [("deposit money", "पैसे जमा करने"), ("withdraw money", "पैसे निकालने"),
                ("open an account", "खाता खोलने"), ("get a loan", "लोन लेने")]
    for s in SUBJECTS:
        for e, h in purposes:
            yield (J(en(s), "went to the bank to", e), J(nom(s), h, "बैंक", perf(GAYA, s)),
                   {"subj": en(s), "ctx": e.split()[0]})


@frame("bank_money_deposit", "bank", "money", ("subj", "verb"))
def _():
    acts = [("deposited money in the bank", "बैंक में पैसे जमा किए"),
            ("kept money in the bank", "बैंक में पैसे रखे"),
            ("withdrew money from the bank", "बैंक से पैसे निकाले"),
            ("took money from the bank", "बैंक से पैसे लिए")]
    for s in SUBJECTS:
        for e, h in acts:
            yield (J(en(s), e), J(erg(s), h), {"subj": en(s), "verb": e.split()[0]})


@frame("bank_river_sat", "bank", "river", ("subj", "verb", "ctx"))
def _():
    verbs = [("sat", BAITHA), ("slept", SOYA), ("played", KHELA), ("walked", TAHLA)]
    waters = [("river", "नदी"), ("lake", "झील")]
    for s in SUBJECTS:
        for ev, forms in verbs:
            for ew, hw in waters:
                yield (J(en(s), ev, "on the bank of the", ew),
                       J(nom(s), hw, "के किनारे पर", perf(forms, s)),
                       {"subj": en(s), "verb": ev, "ctx": ew})


@frame("bank_saw", "bank", "both", ("subj", "sense"))  # a cell holds thief + guard
def _():
    for s in SUBJECTS:
        if " " not in en(s):  # keeps english <= 10 tokens
            yield (J(en(s), "saw a snake on the bank of the river"),
                   J(erg(s), "नदी के किनारे पर एक साँप देखा"), {"subj": en(s), "sense": "river"})
        for e, h in [("thief", "चोर"), ("guard", "गार्ड")]:
            yield (J(en(s), "saw a", e, "in the bank"),
                   J(erg(s), "बैंक में एक", h, "देखा"), {"subj": en(s), "sense": "money"})


@frame("bank_short", "bank", "both", ("sense", "verb"))
def _():
    heads = [("money", "पैसों वाला बैंक"), ("river", "नदी का किनारा")]
    verbs = [("grows", "बढ़ता है"), ("flows", "बहता है"), ("opens", "खुलता है"),
             ("closes", "बंद होता है"), ("shines", "चमकता है")]
    for eh, hh in heads:
        for ev, hv in verbs:
            yield (J(eh, "bank", ev), J(hh, hv), {"sense": eh, "verb": ev})


# --- word sense: bat ------------------------------------------------------------
@frame("bat_saw", "bat", "both", ("subj", "ctx"))
def _():
    ctxs = [("in the cave", "गुफा में", "चमगादड़"), ("in the tree", "पेड़ पर", "चमगादड़"),
            ("at night", "रात में", "चमगादड़"), ("in the dark", "अंधेरे में", "चमगादड़"),
            ("in the forest", "जंगल में", "चमगादड़"),
            ("in the shop", "दुकान में", "बल्ला"), ("at the stadium", "स्टेडियम में", "बल्ला"),
            ("at the match", "मैच में", "बल्ला"), ("on the pitch", "पिच पर", "बल्ला")]
    for s in SUBJECTS:
        for e, h, noun in ctxs:
            yield (J(en(s), "saw a bat", e), J(erg(s), h, "एक", noun, "देखा"),
                   {"subj": en(s), "ctx": e.split()[-1],
                    "sense": "animal" if noun == "चमगादड़" else "cricket"})


@frame("bat_bought", "bat", "cricket", ("subj", "ctx"))
def _():
    for s in SUBJECTS:
        for e, h in [("cricket", "क्रिकेट"), ("the match", "मैच")]:
            yield (J(en(s), "bought a bat for", e), J(erg(s), h, "के लिए एक बल्ला खरीदा"),
                   {"subj": en(s), "ctx": e.split()[-1]})


# --- word sense: light ------------------------------------------------------------
WEIGHT_OBJS = [("bag", "थैला", "m"), ("phone", "फ़ोन", "m"), ("doll", "गुड़िया", "f"),
               ("robot", "रोबोट", "m"), ("box", "डिब्बा", "m"), ("watch", "घड़ी", "f")]


@frame("light_weight", "light", "weight", ("obj", "adj", "tense"))
def _():
    for e, h, g in WEIGHT_OBJS:
        for ea, forms in [("light", ("हल्का", "हल्की", "", "")), ("heavy", ("भारी", "भारी", "", ""))]:
            for be, aux in [("is", "है"), ("was", agr(g, "sg", ("था", "थी", "", "")))]:
                yield (J("the", e, be, ea), J(h, agr(g, "sg", forms), aux),
                       {"obj": e, "adj": ea, "tense": be})


@frame("light_weight_owner", "light", "weight", ("owner", "obj", "adj"))
def _():
    subj = dict((en(s), s) for s in SUBJECTS)
    for eo, key in OWNERS:
        for e, h, g in WEIGHT_OBJS:
            for ea, forms in [("light", ("हल्का", "हल्की")), ("heavy", ("भारी", "भारी"))]:
                yield (J(eo, e, "is", ea),
                       J(poss(subj[key], "a" if g == "m" else "i"), h, forms[g == "f"], "है"),
                       {"owner": eo, "obj": e, "adj": ea})


@frame("light_lamp", "light", "lamp", ("subj", "ctx", "onoff"))
def _():
    rooms = [("kitchen", "रसोई"), ("room", "कमरे"), ("garden", "बगीचे")]
    for s in SUBJECTS:
        for onoff, verb in [("on", "जलाई"), ("off", "बुझाई")]:
            for e, h in rooms:
                yield (J(en(s), "turned", onoff, "the light in the", e),
                       J(erg(s), h, "में बत्ती", verb), {"subj": en(s), "ctx": e, "onoff": onoff})


# ---------------------------------------------------------------------------
# Held-out combinations -> test.
#
# A held-out unit is one *cell* of a frame's grid (the values of its `keys`,
# e.g. subject = "the girls" x context = "movie" in sack_idiom); every row of
# that cell goes to test (a cell of hot_idiom holds both tenses).  Cells are
# never whole rows or columns of the grid: each frame holds out about
# HOLD_FRACTION of its cells, chosen so that no value of any key loses more
# than its share of cells, and the check below requires every part of a test
# cell to be seen >= MIN_SEEN times in train with the same idiom and sense.
# PINNED sentences are held out first (their whole cell goes to test).
# ---------------------------------------------------------------------------
HOLD_FRACTION = 0.11
MIN_SEEN = 4        # train rows of the same (item, sense) sharing each part of a test cell
FRAME_MIN_SEEN = 2  # ... and rows of the same grid frame sharing it
PINNED = [
    "the girls hit the sack after the movie",
    "we got cold feet before the interview",
    "the girl is in hot water because of the lie",
    "priya spilled the beans in the kitchen",
    "he sat on the bank of the river",
    "he deposited money in the bank",
    "she said break a leg before the interview",
    "ravi broke the ice at the wedding",
]
# Must be in train exactly.
FORCE_TRAIN = ["she ate a piece of cake", "the exam was a piece of cake",
               "money bank grows", "river bank flows"]
# Every token of these must occur in train (the sentences themselves are in test).
COVER_IN_TRAIN = ["he sat on the bank of the river", "he deposited money in the bank"]

VALID_FRACTION = 0.10


def fail(msg):
    sys.stderr.write("CHECK FAILED: " + msg + "\n")
    sys.exit(1)


def norm(text):
    return unicodedata.normalize("NFC", " ".join(text.split()))


class Row:
    __slots__ = ("en", "hi", "frame", "item", "sense", "attrs", "cell")

    def __init__(self, e, h, frame_name, item, sense, attrs, keys):
        self.en, self.hi, self.frame, self.item = e, h, frame_name, item
        self.sense = attrs.get("sense", sense)
        self.attrs = attrs
        self.cell = tuple((k, attrs[k]) for k in keys)

    def parts(self):
        """(item, sense, key, value) for every part of the row's cell"""
        return [(self.item, self.sense, k, v) for k, v in self.cell]

    def frame_parts(self):
        return [("frame", self.frame, k, v) for k, v in self.cell]


def build():
    rows = []
    seen = {}
    for name, item, sense, keys, fn in FRAMES:
        for e, h, attrs in fn():
            e, h = norm(e), norm(h)
            if e in seen:
                fail("english sentence generated twice: %r -> %r / %r" % (e, seen[e], h))
            seen[e] = h
            rows.append(Row(e, h, name, item, sense, attrs, keys))
    return rows


def choose_holdout(rows, rng):
    """Returns the set of (frame, cell) pairs held out for test."""
    held = set()
    by_en = dict((r.en, r) for r in rows)
    # support[part] = rows left outside test that contain the part
    # and ("frame", frame, key, value) = rows of that frame with the value
    support = {}
    cell_parts = {}  # (frame, cell) -> {part: rows}
    for r in rows:
        cp = cell_parts.setdefault((r.frame, r.cell), {})
        for p in r.parts() + r.frame_parts():
            support[p] = support.get(p, 0) + 1
            cp[p] = cp.get(p, 0) + 1
    n_keys = dict((f[0], len(f[3])) for f in FRAMES)

    def take(fc):
        held.add(fc)
        for p, n in cell_parts[fc].items():
            support[p] -= n

    def affordable(fc):
        # every part keeps MIN_SEEN rows of its idiom/sense; in a grid frame every
        # value also keeps FRAME_MIN_SEEN rows of the frame itself
        for p, n in cell_parts[fc].items():
            if p[0] == "frame":
                if n_keys[fc[0]] > 1 and support[p] - n < FRAME_MIN_SEEN:
                    return False
            elif support[p] - n < MIN_SEEN:
                return False
        return True

    for s in PINNED:
        if s not in by_en:
            fail("pinned sentence not generated: %r" % s)
        take((by_en[s].frame, by_en[s].cell))
    for name, _item, _sense, keys, _fn in FRAMES:
        cells = []
        for r in rows:
            if r.frame == name and r.cell not in cells:
                cells.append(r.cell)
        n_hold = max(1, int(round(HOLD_FRACTION * len(cells))))
        # per key, how many cells each value may lose
        values = dict((k, []) for k in keys)
        for c in cells:
            for k, v in c:
                if v not in values[k]:
                    values[k].append(v)
        cap = dict((k, -(-n_hold // len(values[k]))) for k in keys)
        used = {}
        picked = [c for c in cells if (name, c) in held]
        for c in picked:
            for kv in c:
                used[kv] = used.get(kv, 0) + 1
        order = list(cells)
        rng.shuffle(order)
        for c in order:
            if len(picked) >= n_hold:
                break
            if c in picked or any(used.get(kv, 0) >= cap[kv[0]] for kv in c):
                continue
            if not affordable((name, c)):
                continue
            picked.append(c)
            take((name, c))
            for kv in c:
                used[kv] = used.get(kv, 0) + 1
    return held


def split(rows):
    rng = random.Random(SEED)
    held = choose_holdout(rows, rng)
    test, pool = [], []
    for r in rows:
        (test if (r.frame, r.cell) in held else pool).append(r)
    forced = [r for r in pool if r.en in FORCE_TRAIN]
    rest = [r for r in pool if r.en not in FORCE_TRAIN]
    n_valid = int(round(VALID_FRACTION * len(rows)))
    # Counts over the would-be train set.  A row may move to valid only if every
    # one of its tokens keeps an occurrence in train, every part of its cell
    # keeps MIN_SEEN rows of the same idiom/sense in train and FRAME_MIN_SEEN
    # rows of the same frame.
    counts = {}
    for r in forced + rest:
        for key in row_keys(r):
            counts[key] = counts.get(key, 0) + 1
    order = list(range(len(rest)))
    rng.shuffle(order)
    chosen = []
    for i in order:
        if len(chosen) >= n_valid:
            break
        need = {}
        for key in row_keys(rest[i]):
            need[key] = need.get(key, 0) + 1
        if all(counts[k] - c >= MIN_VALID.get(k[0], 1) for k, c in need.items()):
            for k, c in need.items():
                counts[k] -= c
            chosen.append(i)
    valid_set = set(chosen)
    valid = [rest[i] for i in sorted(chosen)]
    train = forced + [rest[i] for i in range(len(rest)) if i not in valid_set]
    rng.shuffle(train)
    rng.shuffle(valid)
    rng.shuffle(test)
    return train, valid, test


MIN_VALID = {"part": MIN_SEEN, "frame": FRAME_MIN_SEEN}


def row_keys(r):
    keys = [("en", t) for t in r.en.split(" ")] + [("hi", t) for t in r.hi.split(" ")]
    return keys + [("part",) + p for p in r.parts()] + r.frame_parts()


def vocab(rows, side):
    v = {}
    for r in rows:
        for t in (r.en if side == 0 else r.hi).split(" "):
            v[t] = v.get(t, 0) + 1
    return v


def check(train, valid, test):
    all_rows = train + valid + test
    ens = [r.en for r in all_rows]
    if len(ens) != len(set(ens)):
        fail("duplicate english sentence across splits")
    for r in all_rows:
        e, h = r.en, r.hi
        for side, text, limit in [("en", e, MAX_EN), ("hi", h, MAX_HI)]:
            if not text or "\t" in text or "\n" in text or text != text.strip() or "  " in text:
                fail("bad field (%s): %r" % (side, text))
            if len(text.split(" ")) > limit:
                fail("%s sentence too long: %r" % (side, text))
        if not all(c == " " or "a" <= c <= "z" for c in e):
            fail("english must be lowercase letters and spaces: %r" % e)
        if any(c in h for c in "।॥,.?!;:'\"-()"):
            fail("punctuation in hindi: %r" % h)
        if not any("\u0900" <= c <= "\u097f" for c in h) or any("a" <= c.lower() <= "z" for c in h):
            fail("hindi side must be devanagari: %r" % h)
        if unicodedata.normalize("NFC", h) != h:
            fail("hindi not NFC: %r" % h)
    train_en, train_hi = vocab(train, 0), vocab(train, 1)
    for name, rows in [("valid", valid), ("test", test)]:
        for r in rows:
            for t in r.en.split(" "):
                if t not in train_en:
                    fail("%s english token %r (in %r) not in train" % (name, t, r.en))
            for t in r.hi.split(" "):
                if t not in train_hi:
                    fail("%s hindi token %r (in %r) not in train" % (name, t, r.hi))
    # held-out cells: never in train, every part seen MIN_SEEN times in train
    train_cells = set((r.frame, r.cell) for r in train)
    support = {}
    for r in train:
        for p in r.parts() + r.frame_parts():
            support[p] = support.get(p, 0) + 1
    for r in test:
        if (r.frame, r.cell) in train_cells:
            fail("test cell also in train: %s %r" % (r.frame, r.cell))
        for p in r.parts():
            if support.get(p, 0) < MIN_SEEN:
                fail("test part %r of %r seen only %d times in train" % (p, r.en, support.get(p, 0)))
        if len(r.cell) > 1:
            for p in r.frame_parts():
                if support.get(p, 0) < FRAME_MIN_SEEN:
                    fail("test part %r of %r seen only %d times in train"
                         % (p, r.en, support.get(p, 0)))
    for s in PINNED:
        if s not in set(r.en for r in test):
            fail("pinned sentence not in test: %r" % s)
    train_set = set(r.en for r in train)
    for s in FORCE_TRAIN:
        if s not in train_set:
            fail("required sentence not in train: %r" % s)
    lookup = dict((r.en, r.hi) for r in all_rows)
    for s in COVER_IN_TRAIN:
        if s not in lookup:
            fail("coverage sentence missing from dataset: %r" % s)
        for t in s.split(" "):
            if t not in train_en:
                fail("token %r of %r not in train" % (t, s))
        for t in lookup[s].split(" "):
            if t not in train_hi:
                fail("hindi token %r of %r not in train" % (t, lookup[s]))
    for item in sorted(set(f[1] for f in FRAMES)):
        senses = sorted(set(r.sense for r in all_rows if r.item == item))
        for sense in senses:
            if not any(r.item == item and r.sense == sense for r in test):
                fail("test has no %r sentence with sense %r" % (item, sense))


def write(path, rows):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for r in rows:
            f.write(r.en + "\t" + r.hi + "\n")


def main():
    rows = build()
    train, valid, test = split(rows)
    check(train, valid, test)
    os.makedirs(OUT_DIR, exist_ok=True)
    for name, part in [("train", train), ("valid", valid), ("test", test)]:
        write(os.path.join(OUT_DIR, name + ".tsv"), part)
    total = len(rows)
    print("pairs: total %d  train %d  valid %d  test %d (%.1f%% test)"
          % (total, len(train), len(valid), len(test), 100.0 * len(test) / total))
    print("tokens (train): en %d  hi %d" % (sum(len(r.en.split()) for r in train),
                                            sum(len(r.hi.split()) for r in train)))
    print("vocab (all splits): en %d  hi %d" % (len(vocab(rows, 0)), len(vocab(rows, 1))))
    print("vocab (train):      en %d  hi %d" % (len(vocab(train, 0)), len(vocab(train, 1))))
    print("max tokens: en %d  hi %d" % (max(len(r.en.split()) for r in rows),
                                         max(len(r.hi.split()) for r in rows)))
    print("frames: %d, idioms: %d, held-out cells: %d"
          % (len(FRAMES), len(set(f[1] for f in FRAMES if f[2] == "idiom")),
             len(set((r.frame, r.cell) for r in test))))


if __name__ == "__main__":
    main()
