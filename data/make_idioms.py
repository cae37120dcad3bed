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

# ---------------------------------------------------------------------------
# Frames.  Each frame yields (english, hindi, attrs); attrs are used by the
# held-out rules below.  "sense" is "idiom", "literal", or a word sense.
# ---------------------------------------------------------------------------
FRAMES = []


def frame(name, item, sense):
    def deco(fn):
        FRAMES.append((name, item, sense, fn))
        return fn
    return deco


def J(*parts):
    return " ".join(p for p in parts if p)


# --- 1. piece of cake ------------------------------------------------------
# nouns: english, hindi, gender, number
EASY_THINGS = [
    ("exam", "परीक्षा", "f", "sg"), ("test", "टेस्ट", "m", "sg"),
    ("homework", "होमवर्क", "m", "sg"), ("match", "मैच", "m", "sg"),
    ("puzzle", "पहेली", "f", "sg"), ("interview", "इंटरव्यू", "m", "sg"),
]
EASY_FOR = ["exam", "test", "homework", "puzzle"]


def agr(g, n, forms):
    return forms[{"msg": 0, "fsg": 1, "mpl": 2, "fpl": 3}[g + n]]


@frame("cake_idiom", "piece of cake", "idiom")
def _():
    for e, h, g, n in EASY_THINGS:
        for tense in ["past", "pres"]:
            be = "was" if tense == "past" else "is"
            aux = agr(g, n, ("था", "थी", "थे", "थीं")) if tense == "past" else "है"
            yield (J("the", e, be, "a piece of cake"), J(h, "बहुत आसान", aux),
                   {"thing": e, "tense": tense})


@frame("cake_idiom_for", "piece of cake", "idiom")
def _():
    for e, h, g, n in EASY_THINGS:
        if e not in EASY_FOR:
            continue
        for s in SUBJECTS:
            aux = agr(g, n, ("था", "थी", "थे", "थीं"))
            yield (J("the", e, "was a piece of cake for", en_obj(s)),
                   J(h, poss(s, "e"), "लिए बहुत आसान", aux),
                   {"thing": e, "subj": en(s)})


@frame("cake_literal", "piece of cake", "literal")
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
EVENTS = [("show", "शो"), ("play", "नाटक"), ("match", "मैच"),
          ("exam", "परीक्षा"), ("interview", "इंटरव्यू")]


@frame("leg_idiom", "break a leg", "idiom")
def _():
    for s in SUBJECTS:
        for e, h in EVENTS:
            yield (J(en(s), "said break a leg before the", e),
                   J(erg(s), h, "से पहले शुभकामनाएँ दीं"),
                   {"subj": en(s), "ctx": e})


@frame("leg_idiom_imp", "break a leg", "idiom")
def _():
    for e, h in EVENTS:
        yield (J("break a leg in the", e), J(h, "के लिए शुभकामनाएँ"), {"ctx": e})


@frame("leg_literal", "break a leg", "literal")
def _():
    ctxs = [("before the show", "शो से पहले"), ("before the match", "मैच से पहले"),
            ("before the play", "नाटक से पहले"), ("in the accident", "दुर्घटना में"),
            ("on the stairs", "सीढ़ियों पर")]
    for s in SINGULAR_SUBJECTS:
        for e, h in ctxs:
            yield (J(en(s), "broke a leg", e), J(poss(s, "i"), "टांग", h, "टूट गई"),
                   {"subj": en(s), "ctx": e.split()[-1]})


# --- 3. spill the beans -----------------------------------------------------
SECRETS = [("party", "पार्टी"), ("plan", "योजना"), ("gift", "तोहफ़े"),
           ("wedding", "शादी"), ("trip", "यात्रा")]


@frame("beans_idiom", "spill the beans", "idiom")
def _():
    for s in SUBJECTS:
        for e, h in SECRETS:
            yield (J(en(s), "spilled the beans about the", e),
                   J(erg(s), h, "का राज़ खोल दिया"), {"subj": en(s), "ctx": e})


@frame("beans_idiom_always", "spill the beans", "idiom")
def _():
    for s in SUBJECTS:
        yield (J(en(s), "always", en_verb_pres(s, "spill", "spills"), "the beans"),
               J(nom(s), "हमेशा राज़ खोल", hab("दे", s), hi_aux_pres(s)), {"subj": en(s)})


@frame("beans_literal", "spill the beans", "literal")
def _():
    places = [("on the floor", "फ़र्श पर"), ("on the table", "मेज़ पर"),
              ("on the carpet", "कालीन पर"), ("on the road", "सड़क पर"),
              ("in the kitchen", "रसोई में")]
    for s in SUBJECTS:
        for e, h in places:
            yield (J(en(s), "spilled the beans", e), J(erg(s), h, "फलियाँ गिरा दीं"),
                   {"subj": en(s), "ctx": e.split()[-1]})


@frame("beans_literal_always", "spill the beans", "literal")
def _():
    for s in SUBJECTS:
        yield (J(en(s), "always", en_verb_pres(s, "spill", "spills"), "the beans on the floor"),
               J(nom(s), "हमेशा फ़र्श पर फलियाँ गिरा", hab("दे", s), hi_aux_pres(s)),
               {"subj": en(s)})


# --- 4. cold feet -----------------------------------------------------------
@frame("feet_idiom", "cold feet", "idiom")
def _():
    ctxs = [("wedding", "शादी"), ("exam", "परीक्षा"), ("interview", "इंटरव्यू"),
            ("show", "शो"), ("match", "मैच"), ("speech", "भाषण")]
    for s in SUBJECTS:
        for e, h in ctxs:
            yield (J(en(s), "got cold feet before the", e),
                   J(nom(s), h, "से पहले घबरा", perf(GAYA, s)), {"subj": en(s), "ctx": e})


@frame("feet_literal", "cold feet", "literal")
def _():
    ctxs = [("snow", "बर्फ़"), ("rain", "बारिश"), ("river", "नदी"), ("winter", "सर्दियों")]
    for s in SUBJECTS:
        for e, h in ctxs:
            yield (J(en(s), "got cold feet in the", e),
                   J(poss(s, "e"), "पैर", h, "में ठंडे हो गए"), {"subj": en(s), "ctx": e})


# --- 5. under the weather ---------------------------------------------------
TIMES = [("today", "आज", "pres"), ("yesterday", "कल", "past"),
         ("this morning", "आज सुबह", "past"), ("last week", "पिछले हफ़्ते", "past")]


@frame("weather_idiom", "under the weather", "idiom")
def _():
    for s in SUBJECTS:
        for e, h, tense in TIMES:
            be = en_be_pres(s) if tense == "pres" else en_be_past(s)
            aux = "है" if tense == "pres" else "थी"
            yield (J(en(s), be, "under the weather", e),
                   J(poss(s, "i"), "तबीयत", h, "ठीक नहीं", aux), {"subj": en(s), "time": e})


@frame("weather_literal", "under the weather", "literal")
def _():
    adjs = [("cold", "ठंडा"), ("hot", "गर्म"), ("bad", "खराब"), ("good", "अच्छा")]
    for ea, ha in adjs:
        for e, h, tense in TIMES:
            be, aux = ("is", "है") if tense == "pres" else ("was", "था")
            yield (J("the weather", be, ea, e), J("मौसम", h, ha, aux), {"adj": ea, "time": e})


# --- 6/7. hit the sack / hit the books -------------------------------------
HIT_WITH = [("stick", "डंडे"), ("bat", "बल्ले"), ("hammer", "हथौड़े"), ("shoe", "जूते")]


@frame("sack_idiom", "hit the sack", "idiom")
def _():
    ctxs = [("early", "जल्दी"), ("after dinner", "खाने के बाद"),
            ("after the movie", "फ़िल्म के बाद"), ("after the match", "मैच के बाद"),
            ("at ten", "दस बजे")]
    for s in SUBJECTS:
        for e, h in ctxs:
            yield (J(en(s), "hit the sack", e), J(nom(s), h, "सोने", perf(CHALA, s), perf(GAYA, s)),
                   {"subj": en(s), "ctx": e.split()[-1]})


@frame("sack_literal", "hit the sack", "literal")
def _():
    for s in SUBJECTS:
        for e, h in HIT_WITH:
            yield (J(en(s), "hit the sack with a", e), J(erg(s), h, "से बोरे को मारा"),
                   {"subj": en(s), "ctx": e})


@frame("books_idiom", "hit the books", "idiom")
def _():
    ctxs = [("before the exam", "परीक्षा से पहले"), ("before the test", "टेस्ट से पहले"),
            ("before the interview", "इंटरव्यू से पहले"), ("after dinner", "खाने के बाद"),
            ("after the movie", "फ़िल्म के बाद")]
    for s in SUBJECTS:
        for e, h in ctxs:
            yield (J(en(s), "hit the books", e), J(erg(s), h, "मन लगाकर पढ़ाई की"),
                   {"subj": en(s), "ctx": e.split()[-1]})


@frame("books_literal", "hit the books", "literal")
def _():
    for s in SUBJECTS:
        for e, h in HIT_WITH:
            yield (J(en(s), "hit the books with a", e), J(erg(s), h, "से किताबों को मारा"),
                   {"subj": en(s), "ctx": e})


# --- 8. in hot water --------------------------------------------------------
@frame("hot_idiom", "in hot water", "idiom")
def _():
    ctxs = [("lie", "झूठ"), ("mistake", "गलती"), ("fight", "लड़ाई"), ("joke", "मज़ाक")]
    for s in SUBJECTS:
        for tense in ["pres", "past"]:
            for e, h in ctxs:
                be = en_be_pres(s) if tense == "pres" else en_be_past(s)
                aux = hi_aux_pres(s) if tense == "pres" else hi_aux_past(s)
                yield (J(en(s), be, "in hot water because of the", e),
                       J(nom(s), h, "की वजह से मुसीबत में", aux),
                       {"subj": en(s), "ctx": e, "tense": tense})


@frame("hot_literal", "in hot water", "literal")
def _():
    objs = [("clothes", "कपड़े", "धोए"), ("plates", "प्लेटें", "धोईं"), ("cup", "कप", "धोया"),
            ("shirt", "कमीज़", "धोई"), ("rice", "चावल", "धोए")]
    for s in SUBJECTS:
        for e, h, v in objs:
            yield (J(en(s), "washed the", e, "in hot water"), J(erg(s), h, "गर्म पानी में", v),
                   {"subj": en(s), "obj": e})


@frame("hot_literal_be", "in hot water", "literal")
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
]
BROKEN_TOYS = ["doll", "robot", "statue", "puppet"]


@frame("arm_idiom", "cost an arm and a leg", "idiom")
def _():
    for e, h, _o, g, n in PRICEY:
        adj = agr(g, n, ("महंगा", "महंगी", "महंगे", "महंगी"))
        yield (J("the", e, "cost an arm and a leg"),
               J(h, "बहुत", adj, agr(g, n, ("था", "थी", "थे", "थीं"))), {"obj": e, "tense": "past"})
        if n == "sg":  # "the shoes cost" would be ambiguous between present and past
            yield (J("the", e, "costs an arm and a leg"), J(h, "बहुत", adj, "है"),
                   {"obj": e, "tense": "pres"})


@frame("arm_literal", "cost an arm and a leg", "literal")
def _():
    for e, _h, o, g, n in PRICEY:
        if e in BROKEN_TOYS:
            yield (J("the", e, "lost an arm and a leg"),
                   J(o, "का एक हाथ और एक टांग टूट गए"), {"obj": e})


# --- 10. once in a blue moon --------------------------------------------------
@frame("moon_idiom", "once in a blue moon", "idiom")
def _():
    verbs = [("cook", "cooks", "खाना", "बना"), ("smile", "smiles", "", "मुस्कुरा"),
             ("call", "calls", "फ़ोन", "कर"), ("dance", "dances", "", "नाच")]
    for s in SUBJECTS:
        for base, third, obj, stem in verbs:
            yield (J(en(s), en_verb_pres(s, base, third), "once in a blue moon"),
                   J(nom(s), "बहुत कम", obj, hab(stem, s), hi_aux_pres(s)),
                   {"subj": en(s), "verb": base})


@frame("moon_literal", "once in a blue moon", "literal")
def _():
    ctxs = [("in the sky", "आसमान में"), ("last night", "कल रात"),
            ("from the roof", "छत से"), ("once", "एक बार")]
    for s in SUBJECTS:
        for e, h in ctxs:
            yield (J(en(s), "saw a blue moon", e), J(erg(s), h, "एक नीला चाँद देखा"),
                   {"subj": en(s), "ctx": e.split()[-1]})


# --- 11. let the cat out of the bag -----------------------------------------
@frame("cat_idiom", "let the cat out of the bag", "idiom")
def _():
    targets = [("ravi", "रवि को"), ("priya", "प्रिया को"), ("everyone", "सबको")]
    for s in SINGLE_TOKEN_SUBJECTS:  # keeps english <= 10 tokens
        for e, h in targets:
            if e == en(s):
                continue
            yield (J(en(s), "let the cat out of the bag to", e),
                   J(erg(s), h, "राज़ बता दिया"), {"subj": en(s), "ctx": e})


@frame("cat_literal", "let the cat out of the bag", "literal")
def _():
    manners = [("gently", "धीरे से"), ("carefully", "ध्यान से"), ("quickly", "जल्दी से")]
    for s in SINGLE_TOKEN_SUBJECTS:
        for e, h in manners:
            yield (J(en(s), "let the cat out of the bag", e),
                   J(erg(s), "बिल्ली को", h, "थैले से बाहर निकाला"), {"subj": en(s), "ctx": e})


# --- 12. break the ice --------------------------------------------------------
@frame("ice_idiom", "break the ice", "idiom")
def _():
    ctxs = [("party", "पार्टी"), ("meeting", "बैठक"), ("wedding", "शादी"), ("match", "मैच")]
    for s in SUBJECTS:
        for e, h in ctxs:
            yield (J(en(s), "broke the ice at the", e), J(erg(s), h, "में बातचीत शुरू की"),
                   {"subj": en(s), "ctx": e})


@frame("ice_literal", "break the ice", "literal")
def _():
    ctxs = [("on the lake", "झील पर"), ("on the pond", "तालाब पर"), ("on the river", "नदी पर"),
            ("with a hammer", "हथौड़े से"), ("with a stick", "डंडे से")]
    for s in SUBJECTS:
        for e, h in ctxs:
            yield (J(en(s), "broke the ice", e), J(erg(s), h, "बर्फ़ तोड़ी"),
                   {"subj": en(s), "ctx": e.split()[-1]})


# --- word sense: bank ---------------------------------------------------------
@frame("bank_money_went", "bank", "money")
def _():
    purposes = [("deposit money", "पैसे जमा करने"), ("withdraw money", "पैसे निकालने"),
                ("open an account", "खाता खोलने")]
    for s in SUBJECTS:
        for e, h in purposes:
            yield (J(en(s), "went to the bank to", e), J(nom(s), h, "बैंक", perf(GAYA, s)),
                   {"subj": en(s), "ctx": e.split()[0]})


@frame("bank_money_deposit", "bank", "money")
def _():
    acts = [("deposited money in the bank", "बैंक में पैसे जमा किए"),
            ("kept money in the bank", "बैंक में पैसे रखे"),
            ("withdrew money from the bank", "बैंक से पैसे निकाले")]
    for s in SUBJECTS:
        for e, h in acts:
            yield (J(en(s), e), J(erg(s), h), {"subj": en(s), "verb": e.split()[0]})


@frame("bank_river_sat", "bank", "river")
def _():
    verbs = [("sat", BAITHA), ("slept", SOYA), ("played", KHELA)]
    waters = [("river", "नदी"), ("lake", "झील")]
    for s in SUBJECTS:
        for ev, forms in verbs:
            for ew, hw in waters:
                yield (J(en(s), ev, "on the bank of the", ew),
                       J(nom(s), hw, "के किनारे पर", perf(forms, s)),
                       {"subj": en(s), "verb": ev, "ctx": ew})


@frame("bank_saw", "bank", "both")
def _():
    for s in SINGLE_TOKEN_SUBJECTS:  # keeps english <= 10 tokens
        yield (J(en(s), "saw a snake on the bank of the river"),
               J(erg(s), "नदी के किनारे पर एक साँप देखा"), {"subj": en(s), "sense": "river"})
        yield (J(en(s), "saw a thief in the bank"),
               J(erg(s), "बैंक में एक चोर देखा"), {"subj": en(s), "sense": "money"})


@frame("bank_short", "bank", "both")
def _():
    heads = [("money", "पैसों वाला बैंक"), ("river", "नदी का किनारा")]
    verbs = [("grows", "बढ़ता है"), ("flows", "बहता है"), ("opens", "खुलता है"),
             ("closes", "बंद होता है"), ("shines", "चमकता है")]
    for eh, hh in heads:
        for ev, hv in verbs:
            yield (J(eh, "bank", ev), J(hh, hv), {"sense": eh, "verb": ev})


# --- word sense: bat ------------------------------------------------------------
@frame("bat_saw", "bat", "both")
def _():
    ctxs = [("in the cave", "गुफा में", "चमगादड़"), ("in the tree", "पेड़ पर", "चमगादड़"),
            ("at night", "रात में", "चमगादड़"), ("in the shop", "दुकान में", "बल्ला"),
            ("at the stadium", "स्टेडियम में", "बल्ला")]
    for s in SUBJECTS:
        for e, h, noun in ctxs:
            yield (J(en(s), "saw a bat", e), J(erg(s), h, "एक", noun, "देखा"),
                   {"subj": en(s), "ctx": e.split()[-1]})


@frame("bat_bought", "bat", "cricket")
def _():
    for s in SUBJECTS:
        yield (J(en(s), "bought a bat for cricket"), J(erg(s), "क्रिकेट के लिए एक बल्ला खरीदा"),
               {"subj": en(s)})


# --- word sense: light ------------------------------------------------------------
@frame("light_weight", "light", "weight")
def _():
    objs = [("bag", "थैला", "m"), ("phone", "फ़ोन", "m"), ("doll", "गुड़िया", "f"),
            ("robot", "रोबोट", "m")]
    for e, h, g in objs:
        for ea, forms in [("light", ("हल्का", "हल्की", "", "")), ("heavy", ("भारी", "भारी", "", ""))]:
            for be, aux in [("is", "है"), ("was", agr(g, "sg", ("था", "थी", "", "")))]:
                yield (J("the", e, be, ea), J(h, agr(g, "sg", forms), aux),
                       {"obj": e, "adj": ea, "tense": be})


@frame("light_lamp", "light", "lamp")
def _():
    rooms = [("kitchen", "रसोई"), ("room", "कमरे"), ("garden", "बगीचे")]
    for s in SUBJECTS:
        for onoff, verb in [("on", "जलाई"), ("off", "बुझाई")]:
            for e, h in rooms:
                yield (J(en(s), "turned", onoff, "the light in the", e),
                       J(erg(s), h, "में बत्ती", verb), {"subj": en(s), "ctx": e, "onoff": onoff})


# ---------------------------------------------------------------------------
# Held-out combinations -> test.  Each rule is (frame, {attr: value}); a
# sentence goes to test if it matches any rule of its frame.  Every held-out
# subject / context appears in train in other frames or with the other sense.
# ---------------------------------------------------------------------------
HOLDOUT = [
    ("cake_idiom", {"thing": "puzzle"}),
    ("cake_idiom_for", {"subj": "priya"}),
    ("cake_literal", {"subj": "they"}),
    ("leg_idiom", {"subj": "the girl"}),
    ("leg_idiom", {"ctx": "interview"}),
    ("leg_idiom_imp", {"ctx": "interview"}),
    ("leg_literal", {"subj": "ravi"}),
    ("beans_idiom", {"subj": "we"}),
    ("beans_idiom_always", {"subj": "i"}),
    ("beans_literal", {"subj": "the boy"}),
    ("beans_literal", {"ctx": "kitchen"}),
    ("beans_literal_always", {"subj": "the girls"}),
    ("feet_idiom", {"subj": "the girls"}),
    ("feet_idiom", {"ctx": "interview"}),
    ("feet_literal", {"subj": "she"}),
    ("weather_idiom", {"subj": "the boys"}),
    ("weather_literal", {"adj": "hot", "time": "yesterday"}),
    ("sack_idiom", {"subj": "the girls"}),
    ("sack_idiom", {"ctx": "movie"}),
    ("sack_literal", {"subj": "i"}),
    ("books_idiom", {"subj": "she"}),
    ("books_literal", {"subj": "the boys"}),
    ("books_literal", {"ctx": "hammer"}),
    ("hot_idiom", {"subj": "the girl"}),
    ("hot_literal", {"subj": "we"}),
    ("hot_literal_be", {"obj": "shirt", "tense": "past"}),
    ("arm_idiom", {"obj": "statue"}),
    ("arm_literal", {"obj": "puppet"}),
    ("moon_idiom", {"subj": "the boys"}),
    ("moon_literal", {"subj": "priya"}),
    ("cat_idiom", {"subj": "they"}),
    ("cat_literal", {"subj": "she"}),
    ("ice_idiom", {"subj": "ravi"}),
    ("ice_idiom", {"ctx": "wedding"}),
    ("ice_literal", {"subj": "the girl"}),
    ("bank_money_went", {"subj": "priya"}),
    ("bank_money_deposit", {"subj": "he"}),
    ("bank_river_sat", {"subj": "he"}),
    ("bank_saw", {"subj": "we"}),
    ("bank_short", {"sense": "river", "verb": "grows"}),
    ("bank_short", {"sense": "money", "verb": "flows"}),
    ("bat_saw", {"subj": "we"}),
    ("bat_bought", {"subj": "the boy"}),
    ("light_weight", {"obj": "robot", "adj": "light"}),
    ("light_lamp", {"subj": "they"}),
]

# Must be in train exactly.
FORCE_TRAIN = ["she ate a piece of cake", "the exam was a piece of cake",
               "money bank grows", "river bank flows"]
# Every token of these must occur in train (the sentences themselves may be in test).
COVER_IN_TRAIN = ["he sat on the bank of the river", "he deposited money in the bank"]

VALID_FRACTION = 0.10


def fail(msg):
    sys.stderr.write("CHECK FAILED: " + msg + "\n")
    sys.exit(1)


def norm(text):
    return unicodedata.normalize("NFC", " ".join(text.split()))


def build():
    rows = []  # (en, hi, frame, item, sense, attrs)
    seen = {}
    for name, item, sense, fn in FRAMES:
        for e, h, attrs in fn():
            e, h = norm(e), norm(h)
            if e in seen:
                if seen[e] != h:
                    fail("english sentence with two translations: %r -> %r / %r" % (e, seen[e], h))
                continue
            seen[e] = h
            rows.append((e, h, name, item, sense, attrs))
    return rows


def is_held_out(name, attrs):
    for fname, rule in HOLDOUT:
        if fname == name and all(attrs.get(k) == v for k, v in rule.items()):
            return True
    return False


def check_rule_usage(rows):
    for fname, rule in HOLDOUT:
        if not any(r[2] == fname and all(r[5].get(k) == v for k, v in rule.items()) for r in rows):
            fail("held-out rule matches nothing: %s %r" % (fname, rule))


def split(rows):
    rng = random.Random(SEED)
    test, pool = [], []
    for r in rows:
        (test if is_held_out(r[2], r[5]) else pool).append(r)
    forced = [r for r in pool if r[0] in FORCE_TRAIN]
    rest = [r for r in pool if r[0] not in FORCE_TRAIN]
    n_valid = int(round(VALID_FRACTION * len(rows)))
    # token counts over the would-be train set; a row may move to valid only if
    # every one of its tokens keeps at least one occurrence in train.
    counts = {}
    for r in rest:
        for side in (0, 1):
            for t in r[side].split(" "):
                key = (side, t)
                counts[key] = counts.get(key, 0) + 1
    order = list(range(len(rest)))
    rng.shuffle(order)
    chosen = []
    for i in order:
        if len(chosen) >= n_valid:
            break
        need = {}
        for side in (0, 1):
            for t in rest[i][side].split(" "):
                need[(side, t)] = need.get((side, t), 0) + 1
        if all(counts[k] - c >= 1 for k, c in need.items()):
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


def vocab(rows, side):
    v = {}
    for r in rows:
        for t in r[side].split(" "):
            v[t] = v.get(t, 0) + 1
    return v


def check(train, valid, test):
    all_rows = train + valid + test
    ens = [r[0] for r in all_rows]
    if len(ens) != len(set(ens)):
        fail("duplicate english sentence across splits")
    for e, h, *_ in all_rows:
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
        for e, h, *_ in rows:
            for t in e.split(" "):
                if t not in train_en:
                    fail("%s english token %r (in %r) not in train" % (name, t, e))
            for t in h.split(" "):
                if t not in train_hi:
                    fail("%s hindi token %r (in %r) not in train" % (name, t, h))
    train_set = set(r[0] for r in train)
    for s in FORCE_TRAIN:
        if s not in train_set:
            fail("required sentence not in train: %r" % s)
    lookup = dict((r[0], r[1]) for r in all_rows)
    for s in COVER_IN_TRAIN:
        if s not in lookup:
            fail("coverage sentence missing from dataset: %r" % s)
        for t in s.split(" "):
            if t not in train_en:
                fail("token %r of %r not in train" % (t, s))
        for t in lookup[s].split(" "):
            if t not in train_hi:
                fail("hindi token %r of %r not in train" % (t, lookup[s]))
    for sense in ["idiom", "literal", "money", "river"]:
        if not any(r[4] == sense or r[5].get("sense") == sense for r in test):
            fail("test has no sentence of sense %r" % sense)


def write(path, rows):
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for r in rows:
            f.write(r[0] + "\t" + r[1] + "\n")


def main():
    rows = build()
    check_rule_usage(rows)
    train, valid, test = split(rows)
    check(train, valid, test)
    os.makedirs(OUT_DIR, exist_ok=True)
    for name, part in [("train", train), ("valid", valid), ("test", test)]:
        write(os.path.join(OUT_DIR, name + ".tsv"), part)
    total = len(rows)
    print("pairs: total %d  train %d  valid %d  test %d (%.1f%% test)"
          % (total, len(train), len(valid), len(test), 100.0 * len(test) / total))
    print("vocab (all splits): en %d  hi %d" % (len(vocab(rows, 0)), len(vocab(rows, 1))))
    print("vocab (train):      en %d  hi %d" % (len(vocab(train, 0)), len(vocab(train, 1))))
    print("max tokens: en %d  hi %d" % (max(len(r[0].split()) for r in rows),
                                         max(len(r[1].split()) for r in rows)))
    print("frames: %d, idioms: %d" % (len(FRAMES), len([1 for i, f in enumerate(FRAMES)
                                                          if f[2] == "idiom" and
                                                          f[1] not in [g[1] for g in FRAMES[:i] if g[2] == "idiom"]])))


if __name__ == "__main__":
    main()
