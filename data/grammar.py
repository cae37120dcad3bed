# data/grammar.py — the synchronous English/Hindi grammar behind the idiom corpus: the lexicon,
# noun phrases, verb conjugation and clause realisation. It draws nothing at random and writes no
# files; data/make_idioms.py samples clauses from it, and tests/test_grammar.py checks its rules.
"""One structure, two languages: the frames (data/frames/) realise one set of choices as an English
and a Hindi token list with the functions here, one per Hindi rule: agreement (verb_hi, adj_hi,
det_hi, genitive_hi), the ergative (subject_hi), the oblique case before a postposition (np_hi)."""

# ---------------------------------------------------------------------------------------------
# Agreement keys: g = "m" | "f", n = "sg" | "pl", p = 1 | 3.  Masculine singular is the default
# that a verb takes when nothing agrees with it (an object marked with को).
DEFAULT_AGR = ("m", "sg", 3)


def gn(agr):
    """0 = m sg, 1 = f sg, 2 = m pl, 3 = f pl"""
    return {("m", "sg"): 0, ("f", "sg"): 1, ("m", "pl"): 2, ("f", "pl"): 3}[agr[0], agr[1]]


# ---------------------------------------------------------------------------------------------
# Nouns.  hi = (singular direct, singular oblique, plural direct, plural oblique).
# kinds: person (subjects, objects with को), thing (objects), food, drink (mass), task (things that
# can be "a piece of cake"), event (before/after the X), place (in the X), toy (loses an arm).
# ---------------------------------------------------------------------------------------------
NOUNS = {
    # key        english sg, pl              hindi sg dir, sg obl, pl dir, pl obl            g    kinds
    "boy":      ("boy", "boys",            ("लड़का", "लड़के", "लड़के", "लड़कों"),               "m", {"person"}),
    "girl":     ("girl", "girls",          ("लड़की", "लड़की", "लड़कियाँ", "लड़कियों"),          "f", {"person"}),
    "man":      ("man", "men",             ("आदमी", "आदमी", "आदमी", "आदमियों"),              "m", {"person"}),
    "woman":    ("woman", "women",         ("औरत", "औरत", "औरतें", "औरतों"),                 "f", {"person"}),
    "teacher":  ("teacher", "teachers",    ("शिक्षक", "शिक्षक", "शिक्षक", "शिक्षकों"),          "m", {"person"}),
    "child":    ("child", "children",      ("बच्चा", "बच्चे", "बच्चे", "बच्चों"),               "m", {"person"}),
    "friend":   ("friend", "friends",      ("दोस्त", "दोस्त", "दोस्त", "दोस्तों"),              "m", {"person"}),
    "doctor":   ("doctor", "doctors",      ("डॉक्टर", "डॉक्टर", "डॉक्टर", "डॉक्टरों"),          "m", {"person"}),
    "farmer":   ("farmer", "farmers",      ("किसान", "किसान", "किसान", "किसानों"),            "m", {"person"}),
    # things
    "apple":    ("apple", "apples",        ("सेब", "सेब", "सेब", "सेबों"),                    "m", {"thing", "food"}),
    "mango":    ("mango", "mangoes",       ("आम", "आम", "आम", "आमों"),                       "m", {"thing", "food"}),
    "banana":   ("banana", "bananas",      ("केला", "केले", "केले", "केलों"),                  "m", {"thing", "food"}),
    "egg":      ("egg", "eggs",            ("अंडा", "अंडे", "अंडे", "अंडों"),                  "m", {"thing", "food", "cook", "wash"}),
    "book":     ("book", "books",          ("किताब", "किताब", "किताबें", "किताबों"),            "f", {"thing", "read", "write", "light"}),
    "newspaper": ("newspaper", "newspapers", ("अख़बार", "अख़बार", "अख़बार", "अख़बारों"),     "m", {"thing", "read"}),
    "story":    ("story", "stories",       ("कहानी", "कहानी", "कहानियाँ", "कहानियों"),         "f", {"thing", "read", "write"}),
    "car":      ("car", "cars",            ("कार", "कार", "कारें", "कारों"),                   "f", {"thing", "wash", "cost"}),
    "bag":      ("bag", "bags",            ("थैला", "थैले", "थैले", "थैलों"),                  "m", {"thing", "light", "cost"}),
    "box":      ("box", "boxes",           ("डिब्बा", "डिब्बे", "डिब्बे", "डिब्बों"),             "m", {"thing", "light"}),
    "shirt":    ("shirt", "shirts",        ("कमीज़", "कमीज़", "कमीज़ें", "कमीज़ों"),             "f", {"thing", "wash", "cost"}),
    "plate":    ("plate", "plates",        ("प्लेट", "प्लेट", "प्लेटें", "प्लेटों"),             "f", {"thing", "wash", "light"}),
    "watch":    ("watch", "watches",       ("घड़ी", "घड़ी", "घड़ियाँ", "घड़ियों"),              "f", {"thing", "cost", "light"}),
    "doll":     ("doll", "dolls",          ("गुड़िया", "गुड़िया", "गुड़ियाँ", "गुड़ियों"),         "f", {"thing", "toy", "light"}),
    "ball":     ("ball", "balls",          ("गेंद", "गेंद", "गेंदें", "गेंदों"),                 "f", {"thing", "light"}),
    "toy":      ("toy", "toys",            ("खिलौना", "खिलौने", "खिलौने", "खिलौनों"),          "m", {"thing", "toy", "light"}),
    "robot":    ("robot", "robots",        ("रोबोट", "रोबोट", "रोबोट", "रोबोटों"),            "m", {"thing", "toy", "cost"}),
    "vegetable": ("vegetable", "vegetables", ("सब्ज़ी", "सब्ज़ी", "सब्ज़ियाँ", "सब्ज़ियों"),      "f", {"thing", "food", "cook", "wash"}),
    "snake":    ("snake", "snakes",        ("साँप", "साँप", "साँप", "साँपों"),                  "m", {"creature", "animal"}),
    "thief":    ("thief", "thieves",       ("चोर", "चोर", "चोर", "चोरों"),                    "m", {"creature", "person"}),
    "cat":      ("cat", "cats",            ("बिल्ली", "बिल्ली", "बिल्लियाँ", "बिल्लियों"),       "f", {"animal"}),
    # idiom words in their plain sense: a cake, beans, a sack, ice and the moon
    "cake":     ("cake", "cakes",          ("केक", "केक", "केक", "केकों"),                    "m", {"thing", "food"}),
    "bean":     ("bean", "beans",          ("फली", "फली", "फलियाँ", "फलियों"),                "f", {"thing", "food", "cook"}),
    "sack":     ("sack", "sacks",          ("बोरा", "बोरे", "बोरे", "बोरों"),                  "m", {"thing", "light"}),
    "ice":      ("ice", None,              ("बर्फ़", "बर्फ़", None, None),                     "f", {"cold"}),
    "moon":     ("moon", None,             ("चाँद", "चाँद", None, None),                      "m", {"sky"}),
    # mass nouns (no plural, no "a")
    "tea":      ("tea", None,              ("चाय", "चाय", None, None),                       "f", {"drink"}),
    "milk":     ("milk", None,             ("दूध", "दूध", None, None),                       "m", {"drink"}),
    "water":    ("water", None,            ("पानी", "पानी", None, None),                     "m", {"drink"}),
    "juice":    ("juice", None,            ("जूस", "जूस", None, None),                       "m", {"drink"}),
    "money":    ("money", None,            ("पैसे", "पैसे", None, None),                     "mpl", {"money"}),
    # tasks (subjects of "was a piece of cake")
    "exam":     ("exam", "exams",          ("परीक्षा", "परीक्षा", "परीक्षाएँ", "परीक्षाओं"),      "f", {"task", "event"}),
    "test":     ("test", "tests",          ("टेस्ट", "टेस्ट", "टेस्ट", "टेस्टों"),              "m", {"task", "event"}),
    "homework": ("homework", None,         ("होमवर्क", "होमवर्क", None, None),               "m", {"task"}),
    "interview": ("interview", "interviews", ("इंटरव्यू", "इंटरव्यू", "इंटरव्यू", "इंटरव्यूओं"), "m", {"task", "event"}),
    "puzzle":   ("puzzle", "puzzles",      ("पहेली", "पहेली", "पहेलियाँ", "पहेलियों"),         "f", {"task", "write", "read"}),
    "question": ("question", "questions",  ("सवाल", "सवाल", "सवाल", "सवालों"),               "m", {"task", "write", "read"}),
    "match":    ("match", "matches",       ("मैच", "मैच", "मैच", "मैचों"),                    "m", {"task", "event"}),
    # events only
    "party":    ("party", None,            ("पार्टी", "पार्टी", None, None),                  "f", {"event"}),
    "wedding":  ("wedding", None,          ("शादी", "शादी", None, None),                     "f", {"event"}),
    "show":     ("show", None,             ("शो", "शो", None, None),                         "m", {"event"}),
    "meeting":  ("meeting", None,          ("मीटिंग", "मीटिंग", None, None),                  "f", {"event"}),
    "movie":    ("movie", None,            ("फ़िल्म", "फ़िल्म", None, None),                   "f", {"event"}),
    "class":    ("class", None,            ("क्लास", "क्लास", None, None),                    "f", {"event"}),
    "trip":     ("trip", None,             ("यात्रा", "यात्रा", None, None),                   "f", {"event"}),
    "dinner":   ("dinner", None,           ("रात का खाना", "रात के खाने", None, None),        "m", {"event"}),
    # places (singular only)
    "garden":   ("garden", None,           ("बगीचा", "बगीचे", None, None),                   "m", {"place"}),
    "room":     ("room", None,             ("कमरा", "कमरे", None, None),                     "m", {"place"}),
    "kitchen":  ("kitchen", None,          ("रसोई", "रसोई", None, None),                     "f", {"place"}),
    "market":   ("market", None,           ("बाज़ार", "बाज़ार", None, None),                  "m", {"place", "destination"}),
    "park":     ("park", None,             ("पार्क", "पार्क", None, None),                    "m", {"place", "destination"}),
    "house":    ("house", None,            ("घर", "घर", None, None),                         "m", {"place"}),
    "village":  ("village", None,          ("गाँव", "गाँव", None, None),                      "m", {"place", "destination"}),
    "city":     ("city", None,             ("शहर", "शहर", None, None),                       "m", {"place", "destination"}),
    "shop":     ("shop", None,             ("दुकान", "दुकान", None, None),                   "f", {"place", "destination"}),
    "office":   ("office", None,           ("दफ़्तर", "दफ़्तर", None, None),                  "m", {"place", "destination"}),
    "school":   ("school", None,           ("स्कूल", "स्कूल", None, None),                    "m", {"place", "destination"}),
    "stadium":  ("stadium", None,          ("स्टेडियम", "स्टेडियम", None, None),              "m", {"place"}),
    "cave":     ("cave", None,             ("गुफा", "गुफा", None, None),                     "f", {"place"}),
    "forest":   ("forest", None,           ("जंगल", "जंगल", None, None),                     "m", {"place"}),
    "field":    ("field", None,            ("खेत", "खेत", None, None),                       "m", {"place"}),
    "river":    ("river", None,            ("नदी", "नदी", None, None),                       "f", {"water"}),
    "lake":     ("lake", None,             ("झील", "झील", None, None),                       "f", {"water"}),
    "pond":     ("pond", None,             ("तालाब", "तालाब", None, None),                   "m", {"water"}),
    "canal":    ("canal", None,            ("नहर", "नहर", None, None),                       "f", {"water"}),
    "floor":    ("floor", None,            ("फ़र्श", "फ़र्श", None, None),                     "m", {"surface"}),
    "table":    ("table", None,            ("मेज़", "मेज़", None, None),                      "f", {"surface"}),
    "carpet":   ("carpet", None,           ("कालीन", "कालीन", None, None),                   "m", {"surface"}),
    "stairs":   ("stairs", None,           ("सीढ़ियाँ", "सीढ़ियों", None, None),                "f", {"surface"}),
    "board":    ("board", None,            ("बोर्ड", "बोर्ड", None, None),                    "m", {"writing_surface"}),
    "wall":     ("wall", None,             ("दीवार", "दीवार", None, None),                   "f", {"writing_surface"}),
    "door":     ("door", None,             ("दरवाज़ा", "दरवाज़े", None, None),                "m", {"writing_surface"}),
    "tree":     ("tree", None,             ("पेड़", "पेड़", None, None),                       "m", {"place"}),
    "sky":      ("sky", None,              ("आसमान", "आसमान", None, None),                   "m", {"place"}),
    "accident": ("accident", None,         ("दुर्घटना", "दुर्घटना", None, None),              "f", {"place"}),
    "computer": ("computer", None,         ("कंप्यूटर", "कंप्यूटर", None, None),              "m", {"purpose"}),
    "cricket":  ("cricket", None,          ("क्रिकेट", "क्रिकेट", None, None),                "m", {"purpose"}),
    "lie":      ("lie", None,              ("झूठ", "झूठ", None, None),                       "m", {"cause"}),
    "mistake":  ("mistake", None,          ("गलती", "गलती", None, None),                     "f", {"cause"}),
    "fight":    ("fight", None,            ("झगड़ा", "झगड़े", None, None),                    "m", {"cause"}),
    "joke":     ("joke", None,             ("मज़ाक", "मज़ाक", None, None),                    "m", {"cause"}),
    "bank_money": ("bank", None,           ("बैंक", "बैंक", None, None),                     "m", {"bank"}),
    "light_lamp": ("light", "lights",      ("बत्ती", "बत्ती", "बत्तियाँ", "बत्तियों"),          "f", {"lamp"}),
    "bat_animal": ("bat", "bats",          ("चमगादड़", "चमगादड़", "चमगादड़", "चमगादड़ों"),      "m", {"sense"}),
    "bat_cricket": ("bat", "bats",         ("बल्ला", "बल्ले", "बल्ले", "बल्लों"),               "m", {"sense"}),
    "mouse_animal": ("mouse", "mice",      ("चूहा", "चूहे", "चूहे", "चूहों"),                  "m", {"sense"}),
    "mouse_device": ("mouse", "mice",      ("माउस", "माउस", "माउस", "माउसों"),                "m", {"sense"}),
    "letter_mail": ("letter", "letters",   ("चिट्ठी", "चिट्ठी", "चिट्ठियाँ", "चिट्ठियों"),       "f", {"sense"}),
    "letter_char": ("letter", "letters",   ("अक्षर", "अक्षर", "अक्षर", "अक्षरों"),             "m", {"sense"}),
}


def agreeing(direct):
    """(masculine singular direct, masculine oblique or plural, feminine) of an adjective: one that
    ends in -ā inflects (लंबा, लंबे, लंबी), any other is the same in every form (खुश)."""
    return (direct, direct[:-1] + "े", direct[:-1] + "ी") if direct.endswith("ा") else (direct,) * 3


# Adjectives by their masculine singular direct form (light: the weight sense of the ambiguous word).
ADJECTIVES = {key: agreeing(direct) for key, direct in {
    "tall": "लंबा", "little": "छोटा", "old": "बूढ़ा", "good": "अच्छा", "happy": "खुश", "clever": "होशियार",
    "young": "जवान", "new": "नया", "big": "बड़ा", "small": "छोटा", "red": "लाल", "heavy": "भारी",
    "light": "हल्का", "expensive": "महंगा", "cheap": "सस्ता", "hungry": "भूखा", "sad": "उदास",
    "busy": "व्यस्त", "sick": "बीमार", "ready": "तैयार", "angry": "नाराज़", "hot": "गर्म", "cold": "ठंडा",
    "blue": "नीला"}.items()}
ADJECTIVES["new"] = ("नया", "नए", "नई")  # irregular
ADJECTIVES["old_thing"] = agreeing("पुराना")  # "old" of a thing; English "old"
PERSON_ADJECTIVES = ["tall", "little", "old", "good", "happy", "clever", "young", "hungry", "sad", "busy",
                     "sick", "angry"]
THING_ADJECTIVES = ["new", "big", "small", "red", "old_thing", "cheap", "expensive", "blue"]
DRINK_ADJECTIVES = ["hot", "cold"]
PLACE_ADJECTIVES = ["big", "small", "new", "old_thing"]
PREDICATE_ADJECTIVES = ["happy", "hungry", "sad", "busy", "sick", "ready", "angry", "tall"]
THING_PREDICATE_ADJECTIVES = ["heavy", "light", "new", "big", "small", "expensive", "cheap"]


def adj_en(key):
    return "old" if key == "old_thing" else key


def adj_hi(key, agr, oblique):
    """An adjective agrees with its noun: -ā (m sg direct), -e (m sg oblique, m pl), -ī (f)."""
    return possessive_form(ADJECTIVES[key], agr, oblique)


# Determiners: english singular, english plural, hindi (direct sg, oblique sg, direct pl,
# oblique pl) for demonstratives, or a possessive stem that agrees like an -ā adjective.
DEMONSTRATIVES = {
    "this": ("this", "these", ("यह", "इस", "ये", "इन")),
    "that": ("that", "those", ("वह", "उस", "वे", "उन")),
}
POSSESSIVES = {det: agreeing(direct)  # english determiner -> (का form, के form, की form)
               for det, direct in {"my": "मेरा", "his": "उसका", "her": "उसका", "our": "हमारा", "their": "उनका"}.items()}


def possessive_form(forms, agr, oblique):
    """का/के/की and मेरा/मेरे/मेरी agree with the possessed noun like an -ā adjective."""
    return forms[2] if agr[0] == "f" else forms[1] if agr[1] == "pl" or oblique else forms[0]


REFLEXIVE = "own"  # a possessive that refers to the subject: अपना/अपने/अपनी
POSSESSIVES[REFLEXIVE] = agreeing("अपना")
POSSESSIVE_PERSON = {"my": ("sg", 1, None), "our": ("pl", 1, None), "his": ("sg", 3, "m"),
                     "her": ("sg", 3, "f"), "their": ("pl", 3, None)}


def refers_to_subject(det, subj_agr):
    """my/our/his/her/their on a non-subject noun refers to the subject when person, number and
    (for his/her) gender match: i washed my shirt -> मैंने अपनी कमीज़ धोई."""
    if det not in POSSESSIVE_PERSON:
        return False
    n, p, g = POSSESSIVE_PERSON[det]
    return subj_agr[1] == n and subj_agr[2] == p and (g is None or subj_agr[0] == g)


def det_hi(det, agr, oblique):
    if det in ("the", None):
        return []
    if det == "a":
        return ["एक"]
    if det in DEMONSTRATIVES:
        return [DEMONSTRATIVES[det][2][(2 if agr[1] == "pl" else 0) + (1 if oblique else 0)]]
    return [possessive_form(POSSESSIVES[det], agr, oblique)]


def det_en(det, number, next_word):
    if det is None:
        return []
    if det == "a":
        return ["an" if next_word[0] in "aeio" else "a"]
    if det in DEMONSTRATIVES:
        return [DEMONSTRATIVES[det][0 if number == "sg" else 1]]
    return [det]


# ---------------------------------------------------------------------------------------------
# Noun phrases.  An NP is a dict: {"kind": "pron"|"name"|"noun", "key": ..., "number": "sg"|"pl",
# "det": ..., "adjs": [...]}.
PRONOUNS = {
    # key   subj  obj    p  g    n     direct  ergative   dative   possessive stem
    "i":    ("i", "me", 1, "m", "sg", "मैं", "मैंने", "मुझे", ("मेरा", "मेरे", "मेरी")),
    "we":   ("we", "us", 1, "m", "pl", "हम", "हमने", "हमें", ("हमारा", "हमारे", "हमारी")),
    "he":   ("he", "him", 3, "m", "sg", "वह", "उसने", "उसे", ("उसका", "उसके", "उसकी")),
    "she":  ("she", "her", 3, "f", "sg", "वह", "उसने", "उसे", ("उसका", "उसके", "उसकी")),
    "they": ("they", "them", 3, "m", "pl", "वे", "उन्होंने", "उन्हें", ("उनका", "उनके", "उनकी")),
}
NAMES = {  # english -> (hindi, gender)
    "ravi": ("रवि", "m"), "amit": ("अमित", "m"), "rahul": ("राहुल", "m"),
    "priya": ("प्रिया", "f"), "neha": ("नेहा", "f"), "sita": ("सीता", "f"),
}


def pron(key):
    return {"kind": "pron", "key": key}


def name(key):
    return {"kind": "name", "key": key}


def noun(key, number="sg", det="the", adjs=()):
    return {"kind": "noun", "key": key, "number": number, "det": det, "adjs": list(adjs)}


def coord(*items):
    """X and Y: a coordinated noun phrase of names and noun phrases (no pronouns)."""
    return {"kind": "coord", "items": list(items)}


def np_agr(np):
    """A coordinated phrase is plural: masculine unless every conjunct is feminine."""
    if np["kind"] == "coord":
        return ("f" if all(np_agr(x)[0] == "f" for x in np["items"]) else "m", "pl", 3)
    if np["kind"] == "pron":
        p = PRONOUNS[np["key"]]
        return (p[3], p[4], p[2])
    if np["kind"] == "name":
        return (NAMES[np["key"]][1], "sg", 3)
    g = NOUNS[np["key"]][3]
    return ("m", "pl", 3) if g == "mpl" else (g, np["number"], 3)  # mpl: पैसे, a plural masculine mass noun


def en_agr(np):
    """The agreement an English verb takes: as np_agr, but money (पैसे, plural in Hindi) is singular."""
    return ("m", "sg", 3) if np["kind"] == "noun" and NOUNS[np["key"]][3] == "mpl" else np_agr(np)


def np_en(np, role="subj"):
    if np["kind"] == "coord":
        return np_en(np["items"][0], role) + ["and"] + np_en(np["items"][1], role)
    if np["kind"] == "pron":
        p = PRONOUNS[np["key"]]
        return [p[0] if role == "subj" else p[1]]
    if np["kind"] == "name":
        return [np["key"]]
    entry = NOUNS[np["key"]]
    head = entry[0] if np["number"] == "sg" else entry[1]
    words = [adj_en(a) for a in np["adjs"]] + [head]
    return det_en(np["det"], np["number"], words[0]) + words


def np_hi(np, oblique=False):
    """The noun phrase in the direct case, or in the oblique case (before a postposition).  In a
    coordination every conjunct takes the case (लड़के और लड़की ने)."""
    if np["kind"] == "coord":
        return np_hi(np["items"][0], oblique) + ["और"] + np_hi(np["items"][1], oblique)
    if np["kind"] == "pron":
        if oblique:
            raise ValueError("pronouns take fused forms before postpositions")
        return [PRONOUNS[np["key"]][5]]
    if np["kind"] == "name":
        return [NAMES[np["key"]][0]]
    agr = np_agr(np)
    forms = NOUNS[np["key"]][2]
    head = forms[(2 if np["number"] == "pl" else 0) + (1 if oblique else 0)]
    words = [adj_hi(a, agr, oblique) for a in np["adjs"]]
    det = REFLEXIVE if np.get("reflexive") else np["det"]
    return det_hi(det, agr, oblique) + words + head.split()


def subject_hi(np, ergative):
    """The subject: direct case, or the ergative (oblique + ने, fused for pronouns)."""
    if not ergative:
        return np_hi(np)
    if np["kind"] == "pron":
        return [PRONOUNS[np["key"]][6]]
    return np_hi(np, oblique=True) + ["ने"]


def dative_hi(np):
    """An indirect object or a marked direct object: oblique + को (मुझे, उसे, हमें, उन्हें)."""
    if np["kind"] == "pron":
        return [PRONOUNS[np["key"]][7]]
    return np_hi(np, oblique=True) + ["को"]


def genitive_hi(np, possessed_agr, possessed_oblique=False):
    """X's (possessor of a noun): oblique + का/के/की, agreeing with the possessed noun."""
    if np["kind"] == "pron":
        return [possessive_form(PRONOUNS[np["key"]][8], possessed_agr, possessed_oblique)]
    return np_hi(np, oblique=True) + [possessive_form(("का", "के", "की"), possessed_agr, possessed_oblique)]


def ke_hi(np, word):
    """for X -> X के लिए, with X (company) -> X के साथ: the genitive in its oblique form, then word
    (मेरे लिए, रवि के लिए, रवि और प्रिया के साथ)."""
    return genitive_hi(np, DEFAULT_AGR, possessed_oblique=True) + [word]


# ---------------------------------------------------------------------------------------------
# Verbs.  english: (base, 3rd singular, past, -ing); hindi stem and its class:
#   "c"  consonant stem  पढ़ -> पढ़ा पढ़ी पढ़े पढ़ीं, पढ़ेगा पढ़ूँगा पढ़ेंगे
#   "v"  vowel stem      खा -> खाया खाई खाए खाईं, खाएगा खाऊँगा खाएँगे
#   irregular: पी, दे, ले, जा, कर (see PERFECTIVE_IRREGULAR and future_hi)
# same_past: the English past equals the base form (read, hit, let, cost), so the habitual is
# only generated for 3rd singular subjects, where "reads" tells the tenses apart.
VERBS = {
    "eat":   (("eat", "eats", "ate", "eating"), "खा", "v"),
    "drink": (("drink", "drinks", "drank", "drinking"), "पी", "pi"),
    "read":  (("read", "reads", "read", "reading"), "पढ़", "c"),
    "write": (("write", "writes", "wrote", "writing"), "लिख", "c"),
    "buy":   (("buy", "buys", "bought", "buying"), "खरीद", "c"),
    "see":   (("see", "sees", "saw", "seeing"), "देख", "c"),
    "cook":  (("cook", "cooks", "cooked", "cooking"), "पका", "v"),
    "wash":  (("wash", "washes", "washed", "washing"), "धो", "v"),
    "give":  (("give", "gives", "gave", "giving"), "दे", "de"),
    "send":  (("send", "sends", "sent", "sending"), "भेज", "c"),
    "show":  (("show", "shows", "showed", "showing"), "दिखा", "v"),
    "call":  (("call", "calls", "called", "calling"), "बुला", "v"),
    "meet":  (("meet", "meets", "met", "meeting"), "मिल", "c"),
    "catch": (("catch", "catches", "caught", "catching"), "पकड़", "c"),
    "sleep": (("sleep", "sleeps", "slept", "sleeping"), "सो", "v"),
    "laugh": (("laugh", "laughs", "laughed", "laughing"), "हँस", "c"),
    "dance": (("dance", "dances", "danced", "dancing"), "नाच", "c"),
    "run":   (("run", "runs", "ran", "running"), "दौड़", "c"),
    "swim":  (("swim", "swims", "swam", "swimming"), "तैर", "c"),
    "cry":   (("cry", "cries", "cried", "crying"), "रो", "v"),
    "go":    (("go", "goes", "went", "going"), "जा", "ja"),
    "come":  (("come", "comes", "came", "coming"), "आ", "v"),
    "turn_on": (("turn on", "turns on", "turned on", "turning on"), "जला", "v"),
    "turn_off": (("turn off", "turns off", "turned off", "turning off"), "बुझा", "v"),
    # verbs of the idioms' readings
    "say":   (("say", "says", "said", "saying"), "दे", "de"),
    "break": (("break", "breaks", "broke", "breaking"), "तोड़", "c"),
    "hit":   (("hit", "hits", "hit", "hitting"), "मार", "c"),
    "let":   (("let", "lets", "let", "letting"), "निकाल", "c"),
    "spill": (("spill", "spills", "spilled", "spilling"), "गिरा", "v"),
    "get":   (("get", "gets", "got", "getting"), "हो", "ho"),
    "lose":  (("lose", "loses", "lost", "losing"), "टूट", "c"),
    "cost":  (("cost", "costs", "cost", "costing"), "हो", "ho"),
    "keep":  (("keep", "keeps", "kept", "keeping"), "रख", "c"),
    "sit":   (("sit", "sits", "sat", "sitting"), "बैठ", "c"),
    # what opens and closes: खुलना, and बंद होना (बंद + होना, see frames/roles.py: opens)
    "open":  (("open", "opens", "opened", "opening"), "खुल", "c"),
    "close": (("close", "closes", "closed", "closing"), "हो", "ho"),
    # things that flow, grow and shine (the tutorial's "river bank flows", "money bank grows")
    "flow":  (("flow", "flows", "flowed", "flowing"), "बह", "c"),
    "grow":  (("grow", "grows", "grew", "growing"), "बढ़", "c"),
    "shine": (("shine", "shines", "shone", "shining"), "चमक", "c"),
}
SAME_PAST = {"read", "hit", "let", "cost"}
PERFECTIVE_IRREGULAR = {"pi": ("पिया", "पी", "पिए", "पीं"), "de": ("दिया", "दी", "दिए", "दीं"),
                        "ja": ("गया", "गई", "गए", "गईं"), "kar": ("किया", "की", "किए", "कीं"),
                        "ho": ("हुआ", "हुई", "हुए", "हुईं")}
FUTURE_IRREGULAR = {  # 1st singular, singular, plural
    "de": ("दूँ", "दे", "दें"), "pi": ("पिऊँ", "पिए", "पिएँ"), "ho": ("होऊँ", "हो", "हों")}


def perfective_hi(stem, cls, agr):
    """Past participle: -ā/-ī/-e/-īṃ after a consonant, -yā/-ī/-e/-īṃ after a vowel."""
    i = gn(agr)
    if cls in PERFECTIVE_IRREGULAR:
        return PERFECTIVE_IRREGULAR[cls][i]
    if cls == "c":
        return stem + ("ा", "ी", "े", "ीं")[i]
    return stem + ("या", "ई", "ए", "ईं")[i]


def future_hi(stem, cls, agr):
    """Future: 1st singular -ūṃgā, 3rd singular -egā, plural -eṃge; -ā/-ī by gender."""
    g, n, p = agr
    if cls in FUTURE_IRREGULAR:
        base = FUTURE_IRREGULAR[cls]
    elif cls in ("c", "kar"):
        base = (stem + "ूँ", stem + "े", stem + "ें")
    else:  # vowel stems, जा
        base = (stem + "ऊँ", stem + "ए", stem + "एँ")
    i = 0 if (p == 1 and n == "sg") else 1 if n == "sg" else 2
    return base[i] + ("गी" if g == "f" else "गे" if n == "pl" else "गा")


def imperfective_hi(stem, agr, negative_without_aux=False):
    """Habitual participle -tā/-tī/-te; with the auxiliary dropped (negative) f pl is -tīṃ."""
    return stem + ("ता", "ती", "ते", "तीं" if negative_without_aux else "ती")[gn(agr)]


def aux_present_hi(agr):
    return "हूँ" if is_first_singular(agr) else "है" if agr[1] == "sg" else "हैं"


def copula_hi(tense, agr):
    """होना: है/था/होगा with agreement (no progressive)."""
    if tense == "hab":
        return [aux_present_hi(agr)]
    if tense == "past":
        return [("था", "थी", "थे", "थीं")[gn(agr)]]
    return [future_hi("हो", "ho", agr)]


def verb_hi(stem, cls, tense, negative, agr):
    """The finite verb group: [नहीं] V (+ auxiliary).  A negative habitual drops है/हैं."""
    neg = ["नहीं"] if negative else []
    if tense == "hab":
        return neg + [imperfective_hi(stem, agr, negative)] + ([] if negative else [aux_present_hi(agr)])
    if tense == "prog":
        return neg + [stem, ("रहा", "रही", "रहे", "रही")[gn(agr)], aux_present_hi(agr)]
    if tense == "past":
        return neg + [perfective_hi(stem, cls, agr)]
    return neg + [future_hi(stem, cls, agr)]


def compound_hi(main, vector_stem, vector_cls, tense, agr, main_agrees=False):
    """A compound verb: main stem + a conjugated vector verb (खोल दिया, घबरा गया, चला गया).
    With main_agrees the first part is itself a perfective participle (चला/चली/चले गया)."""
    first = perfective_hi(main, "c", agr) if main_agrees else main
    if first.endswith("ीं"):
        first = first[:-1]  # चलीं गईं is written चली गईं
    return [first] + verb_hi(vector_stem, vector_cls, tense, False, agr)


def is_first_singular(agr):
    return agr[2] == 1 and agr[1] == "sg"


def is_third_singular(agr):
    return agr[2] == 3 and agr[1] == "sg"


def be_present_en(subj_agr):
    return "am" if is_first_singular(subj_agr) else ("is" if is_third_singular(subj_agr) else "are")


def verb_en(verb, tense, negative, subj_agr):
    """English verb group for a subject's person and number."""
    base, s3, past, ing = VERBS[verb][0]
    third_sg = is_third_singular(subj_agr)
    if tense == "hab":
        if negative:
            return ["does" if third_sg else "do", "not"] + base.split()
        return (s3 if third_sg else base).split()
    if tense == "past":
        return (["did", "not"] + base.split()) if negative else past.split()
    if tense == "fut":
        return ["will"] + (["not"] if negative else []) + base.split()
    return [be_present_en(subj_agr)] + (["not"] if negative else []) + ing.split()


def be_en(tense, negative, subj_agr):
    if tense == "hab":
        words = [be_present_en(subj_agr)]
    elif tense == "past":
        words = ["was" if is_first_singular(subj_agr) or is_third_singular(subj_agr) else "were"]
    else:
        return ["will", "not", "be"] if negative else ["will", "be"]
    return words + (["not"] if negative else [])
