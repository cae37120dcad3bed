# tests/test_grammar.py — one test per Hindi rule of the corpus grammar (data/grammar.py,
# data/frames.py), each against hand-written Hindi; and the generator's determinism.
# Run: python3 -m unittest tests/test_grammar.py  (make test runs it).
import os
import random
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "data"))
import frames  # noqa: E402
import grammar as g  # noqa: E402
from grammar import name, noun, pron  # noqa: E402

_cache = {}


class GuidedDraw(frames.Draw):
    """A draw that prefers choices named by a word of the wanted sentence, so that a hand-written
    sentence comes up in a few thousand draws instead of millions.  It only steers the choices;
    the English and the Hindi are realised by the generator's own code."""

    def __init__(self, rng, frame, words):
        super().__init__(rng, frame)
        self.words = words

    def pick(self, options):
        named = [o for o in options if isinstance(o, str) and o in self.words and o not in ("the", "a")]
        return super().pick(named or options)


def hindi_of(frame, english, tries=300000):
    """Draws from one frame until the hand-written English sentence comes up; returns its Hindi."""
    key = (frame, english)
    if key not in _cache:
        rng = random.Random(7)
        words = set(english.split())
        for _ in range(tries):
            s = frames.FRAMES[frame][0](GuidedDraw(rng, frame, words))
            if s is not None and s["en"] == english:
                _cache[key] = s["hi"]
                break
    if key not in _cache:
        raise AssertionError(f"frame {frame} never produced '{english}'")
    return _cache[key]


def clause(subj, verb, obj, tense, negative=False, marked=False, adjuncts=([], [])):
    obj_hi = g.dative_hi(obj) if marked else g.np_hi(obj)
    en, hi = frames.transitive_clause(None, verb, g.np_en(obj, "obj"), obj_hi, g.np_agr(obj), tense,
                                      negative, subj, adjuncts, marked_object=marked)
    return " ".join(en), " ".join(hi)


class Agreement(unittest.TestCase):
    def test_habitual_agrees_with_subject_in_gender_number_and_person(self):
        self.assertEqual(clause(name("ravi"), "eat", noun("apple", "sg", "a"), "hab"),
                         ("ravi eats an apple", "रवि एक सेब खाता है"))
        self.assertEqual(clause(noun("girl", "pl"), "eat", noun("apple", "pl", None), "hab"),
                         ("the girls eat apples", "लड़कियाँ सेब खाती हैं"))
        self.assertEqual(clause(pron("i"), "read", noun("book"), "fut")[1], "मैं किताब पढ़ूँगा")
        self.assertEqual(clause(pron("we"), "drink", noun("tea", "sg", None), "hab"),
                         ("we drink tea", "हम चाय पीते हैं"))

    def test_negative_habitual_drops_the_auxiliary_and_feminine_plural_is_nasal(self):
        self.assertEqual(clause(name("priya"), "drink", noun("milk", "sg", None), "hab", True),
                         ("priya does not drink milk", "प्रिया दूध नहीं पीती"))
        self.assertEqual(clause(noun("woman", "pl"), "drink", noun("tea", "sg", None), "hab", True)[1],
                         "औरतें चाय नहीं पीतीं")

    def test_progressive_is_stem_rahaa_and_auxiliary(self):
        self.assertEqual(clause(pron("she"), "write", noun("story", "sg", "a"), "prog"),
                         ("she is writing a story", "वह एक कहानी लिख रही है"))
        self.assertEqual(clause(pron("i"), "cook", noun("egg", "pl", None), "prog", True)[1],
                         "मैं अंडे नहीं पका रहा हूँ")

    def test_future_forms_of_consonant_vowel_and_irregular_stems(self):
        self.assertEqual(g.future_hi("पढ़", "c", ("m", "pl", 3)), "पढ़ेंगे")
        self.assertEqual(g.future_hi("खा", "v", ("f", "pl", 3)), "खाएँगी")
        self.assertEqual(g.future_hi("दे", "de", ("m", "sg", 1)), "दूँगा")
        self.assertEqual(g.future_hi("पी", "pi", ("f", "sg", 3)), "पिएगी")
        self.assertEqual(g.future_hi("कर", "kar", ("m", "sg", 3)), "करेगा")
        self.assertEqual(g.copula_hi("fut", ("m", "pl", 3)), ["होंगे"])

    def test_intransitive_past_agrees_with_the_subject(self):
        self.assertEqual(hindi_of("intransitive", "the girls slept"), "लड़कियाँ सोईं")
        self.assertEqual(hindi_of("intransitive", "she went to the market"), "वह बाज़ार गई")
        self.assertEqual(hindi_of("intransitive", "the boys came home"), "लड़के घर आए")
        self.assertEqual(hindi_of("intransitive", "they will go to school"), "वे स्कूल जाएँगे")
        self.assertEqual(hindi_of("intransitive", "she went to the bank"), "वह बैंक गई")

    def test_adjectives_and_possessives_agree_with_their_noun_in_case(self):
        self.assertEqual(g.np_hi(noun("friend", "sg", "my", ["old"])), ["मेरा", "बूढ़ा", "दोस्त"])
        self.assertEqual(g.np_hi(noun("friend", "sg", "my", ["old"]), oblique=True), ["मेरे", "बूढ़े", "दोस्त"])
        self.assertEqual(g.np_hi(noun("girl", "pl", "our", ["tall"])), ["हमारी", "लंबी", "लड़कियाँ"])
        self.assertEqual(g.np_hi(noun("book", "sg", "a", ["new"])), ["एक", "नई", "किताब"])
        self.assertEqual(g.subject_hi(noun("boy", "sg", "the", ["hungry"]), True), ["भूखे", "लड़के", "ने"])
        self.assertEqual(g.np_hi(noun("milk", "sg", None, ["cold"])), ["ठंडा", "दूध"])


class Ergative(unittest.TestCase):
    def test_past_transitive_subject_takes_ne_and_the_verb_agrees_with_the_object(self):
        self.assertEqual(clause(name("ravi"), "read", noun("book", "pl"), "past"),
                         ("ravi read the books", "रवि ने किताबें पढ़ीं"))
        self.assertEqual(clause(noun("boy"), "eat", noun("banana", "sg", "a"), "past"),
                         ("the boy ate a banana", "लड़के ने एक केला खाया"))
        self.assertEqual(clause(name("sita"), "drink", noun("tea", "sg", None), "past")[1], "सीता ने चाय पी")

    def test_pronouns_have_fused_ergative_forms(self):
        self.assertEqual([g.subject_hi(pron(p), True)[0] for p in ("i", "we", "he", "she", "they")],
                         ["मैंने", "हमने", "उसने", "उसने", "उन्होंने"])

    def test_a_ko_object_leaves_the_perfective_masculine_singular(self):
        self.assertEqual(clause(name("priya"), "call", noun("girl", "pl"), "past", marked=True),
                         ("priya called the girls", "प्रिया ने लड़कियों को बुलाया"))
        self.assertEqual(clause(pron("they"), "see", pron("she"), "past", marked=True),
                         ("they saw her", "उन्होंने उसे देखा"))

    def test_non_past_tenses_keep_the_direct_case_subject(self):
        self.assertEqual(clause(noun("boy", "pl"), "eat", noun("apple", "pl", None), "fut")[1],
                         "लड़के सेब खाएँगे")


class ObliqueCase(unittest.TestCase):
    def test_nouns_take_the_oblique_before_postpositions(self):
        self.assertEqual(g.subject_hi(noun("boy", "pl"), True), ["लड़कों", "ने"])
        self.assertEqual(g.subject_hi(noun("child", "sg", "this"), True), ["इस", "बच्चे", "ने"])
        self.assertEqual(g.dative_hi(noun("girl", "pl", "that")), ["उन", "लड़कियों", "को"])

    def test_place_adjuncts_and_their_adjectives_are_oblique(self):
        self.assertEqual(hindi_of("intransitive", "ravi danced in the big garden"), "रवि बड़े बगीचे में नाचा")

    def test_an_event_as_a_place_takes_mein(self):
        self.assertEqual(hindi_of("intransitive", "ravi danced at the party"), "रवि पार्टी में नाचा")

    def test_near_takes_the_oblique_and_ke_paas(self):
        self.assertEqual(hindi_of("intransitive", "ravi danced near the pond"), "रवि तालाब के पास नाचा")
        self.assertEqual(hindi_of("transitive", "priya ate a mango near the big garden"),
                         "प्रिया ने बड़े बगीचे के पास एक आम खाया")

    def test_writing_on_a_surface_takes_par_after_time(self):
        self.assertEqual(hindi_of("transitive", "neha wrote a question on the door yesterday"),
                         "नेहा ने कल दरवाज़े पर एक सवाल लिखा")

    def test_things_flow_grow_and_shine_in_the_habitual_and_agree(self):
        self.assertEqual(hindi_of("thing_intransitive", "the river flows"), "नदी बहती है")
        self.assertEqual(hindi_of("thing_intransitive", "the children grow every day"), "बच्चे हर दिन बढ़ते हैं")
        self.assertEqual(hindi_of("thing_intransitive", "that car does not shine"), "वह कार नहीं चमकती")

    def test_meet_takes_se_and_agrees_with_the_subject(self):
        self.assertEqual(hindi_of("meet", "priya met ravi"), "प्रिया रवि से मिली")
        self.assertEqual(hindi_of("meet", "the boys will meet her"), "लड़के उससे मिलेंगे")


class WordOrder(unittest.TestCase):
    def test_sov_with_time_place_and_indirect_object_before_the_object(self):
        self.assertEqual(hindi_of("ditransitive", "ravi gave a book to priya in the park yesterday"),
                         "रवि ने कल पार्क में प्रिया को एक किताब दी")

    def test_negation_stands_right_before_the_verb(self):
        self.assertEqual(clause(name("amit"), "send", noun("box", "pl"), "past", True),
                         ("amit did not send the boxes", "अमित ने डिब्बे नहीं भेजे"))


class Idioms(unittest.TestCase):
    def test_piece_of_cake(self):
        self.assertEqual(hindi_of("cake_idiom", "the exam was a piece of cake"), "परीक्षा बहुत आसान थी")
        self.assertEqual(hindi_of("cake_literal", "she ate a piece of cake"), "उसने केक का एक टुकड़ा खाया")

    def test_break_a_leg(self):
        self.assertEqual(hindi_of("leg_idiom", "ravi said break a leg to priya"), "रवि ने प्रिया को शुभकामनाएँ दीं")
        self.assertEqual(hindi_of("leg_literal", "priya broke a leg"), "प्रिया की टांग टूट गई")

    def test_spill_the_beans(self):
        self.assertEqual(hindi_of("spill_idiom", "he spilled the beans about the party"), "उसने पार्टी का राज़ खोल दिया")
        self.assertEqual(hindi_of("spill_literal", "he spilled the beans on the floor"), "उसने फ़र्श पर फलियाँ गिरा दीं")

    def test_cold_feet(self):
        self.assertEqual(hindi_of("feet_idiom", "she got cold feet before the wedding"), "वह शादी से पहले घबरा गई")
        self.assertEqual(hindi_of("feet_literal", "she got cold feet in the snow"), "उसके पैर बर्फ़ में ठंडे हो गए")

    def test_under_the_weather(self):
        self.assertEqual(hindi_of("weather_idiom", "he is under the weather"), "उसकी तबीयत ठीक नहीं है")
        self.assertEqual(hindi_of("weather_literal", "the weather is cold"), "मौसम ठंडा है")

    def test_hit_the_sack(self):
        self.assertEqual(hindi_of("sack_idiom", "the girls hit the sack early"), "लड़कियाँ जल्दी सोने चली गईं")
        self.assertEqual(hindi_of("sack_literal", "he hit the sack with a stick"), "उसने डंडे से बोरे को मारा")

    def test_hit_the_books(self):
        self.assertEqual(hindi_of("books_idiom", "he hit the books"), "उसने मन लगाकर पढ़ाई की")
        self.assertEqual(hindi_of("books_literal", "he hit the books with a stone"), "उसने पत्थर से किताबों को मारा")

    def test_in_hot_water(self):
        self.assertEqual(hindi_of("hot_idiom", "ravi is in hot water because of the lie"), "रवि झूठ की वजह से मुसीबत में है")
        self.assertEqual(hindi_of("hot_literal", "he washed the plates in hot water"), "उसने प्लेटें गर्म पानी में धोईं")

    def test_cost_an_arm_and_a_leg(self):
        self.assertEqual(hindi_of("arm_idiom", "my car cost an arm and a leg"), "मेरी कार बहुत महंगी थी")
        self.assertEqual(hindi_of("arm_idiom", "the red watches will cost an arm and a leg tomorrow"),
                         "लाल घड़ियाँ कल बहुत महंगी होंगी")
        self.assertEqual(hindi_of("arm_literal", "my toy lost an arm and a leg"), "मेरे खिलौने का एक हाथ और एक टांग टूट गए")

    def test_once_in_a_blue_moon(self):
        self.assertEqual(hindi_of("moon_idiom", "she dances once in a blue moon"), "वह बहुत कम नाचती है")
        self.assertEqual(hindi_of("moon_idiom", "ravi eats apples once in a blue moon"), "रवि सेब बहुत कम खाता है")
        self.assertEqual(hindi_of("moon_literal", "she saw a blue moon in the sky"), "उसने आसमान में एक नीला चाँद देखा")

    def test_let_the_cat_out_of_the_bag(self):
        self.assertEqual(hindi_of("cat_idiom", "he let the cat out of the bag to ravi"), "उसने रवि को राज़ बता दिया")
        self.assertEqual(hindi_of("cat_literal", "he let the cat out of the bag gently"), "उसने बिल्ली को धीरे से थैले से बाहर निकाला")

    def test_break_the_ice(self):
        self.assertEqual(hindi_of("ice_idiom", "she broke the ice at the party"), "उसने पार्टी में बातचीत शुरू की")
        self.assertEqual(hindi_of("ice_literal", "he broke the ice on the lake"), "उसने झील पर बर्फ़ तोड़ी")


class WordSenses(unittest.TestCase):
    def test_bank(self):
        self.assertEqual(hindi_of("bank_money", "ravi kept money in the bank"), "रवि ने बैंक में पैसे रखे")
        self.assertEqual(hindi_of("bank_river", "he sat on the bank of the river"), "वह नदी के किनारे पर बैठा")
        self.assertEqual(hindi_of("bank_short", "river bank flows"), "नदी का किनारा बहता है")
        self.assertEqual(hindi_of("bank_short", "money bank does not close every day"),
                         "पैसों वाला बैंक हर दिन बंद नहीं होता")

    def test_bat(self):
        self.assertEqual(hindi_of("bat_animal", "he saw a bat in the cave"), "उसने गुफा में एक चमगादड़ देखा")
        self.assertEqual(hindi_of("bat_cricket", "he bought a bat for cricket"), "उसने क्रिकेट के लिए एक बल्ला खरीदा")

    def test_light(self):
        self.assertEqual(hindi_of("copula_thing", "the bag is light"), "थैला हल्का है")
        self.assertEqual(hindi_of("lamp", "she turned on the light"), "उसने बत्ती जलाई")

    def test_mouse(self):
        self.assertEqual(hindi_of("mouse_animal", "she saw a mouse in the kitchen"), "उसने रसोई में एक चूहा देखा")
        self.assertEqual(hindi_of("mouse_device", "she bought a mouse for the computer"), "उसने कंप्यूटर के लिए एक माउस खरीदा")

    def test_letter(self):
        self.assertEqual(hindi_of("letter_mail", "priya wrote a letter to ravi"), "प्रिया ने रवि को एक चिट्ठी लिखी")
        self.assertEqual(hindi_of("letter_char", "priya wrote a letter on the board"), "प्रिया ने बोर्ड पर एक अक्षर लिखा")


class Generator(unittest.TestCase):
    def test_the_committed_files_are_what_the_generator_writes(self):
        with tempfile.TemporaryDirectory() as out:
            subprocess.run([sys.executable, os.path.join(ROOT, "data", "make_idioms.py"), "--out", out],
                           check=True, stdout=subprocess.DEVNULL)
            for name in sorted(os.listdir(out)):
                with open(os.path.join(out, name), "rb") as a, open(os.path.join(ROOT, "data", "idioms", name), "rb") as b:
                    self.assertTrue(a.read() == b.read(), f"data/idioms/{name} differs from the generator's output")


if __name__ == "__main__":
    unittest.main()
