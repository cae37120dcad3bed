// tests/program/test_probe.cpp — the measures of the tutorial's experiment on models whose answer is known: a
// hand-built translator that reads the cue through attention (cue attention 1.0, cue knockout flips
// every translation, a random knockout none), the sense probe's regression, its example draw, and
// every layer's word vectors.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <sstream>

#include "data/cues.h"
#include "data/dataset.h"
#include "framework/autograd.h"
#include "framework/random.h"
#include "train/experiments/cues/cue_analysis.h"
#include "train/experiments/probe/sense_probe.h"
#include "tests/test_config.h"

using namespace qkv;

namespace {

void set_parameter(models::Translator& model, const std::string& name, const std::vector<double>& values) {
  for (auto& [n, p] : model.named_parameters())
    if (n == name) {
      REQUIRE(static_cast<int64_t>(values.size()) == p.numel());
      NoGradGuard no_grad;
      p.copy_(Tensor::from_vector(values, p.shape()));
      return;
    }
  FAIL("no parameter " << name);
}

// A one-block learned translator of D = 6 (dims: sense+, sense-, slot+, slot-, cue+, cue-), built by
// hand: the <sep> query looks only at the cue (river or money), W_v copies the cue's sense into
// dims 0-1, and the head writes किनारा for river, बैंक for money and, with no cue in sight, है.
// The Hindi positions after <sep> look away from the cue and emit <eos>.
struct HandBuiltCueModel {
  data::Vocab english = data::Vocab::build({{"the", "river", "money", "bank"}});
  data::Vocab hindi = data::Vocab::build({{"किनारा", "बैंक", "है"}});
  Generator gen{1};
  models::Translator model{testing::test_config({6, 2, 2}, english.size(), hindi.size(), {4, 3}), gen};

  HandBuiltCueModel() {
    const int64_t D = 6;
    auto rows = [&](int64_t count, const std::map<int64_t, std::vector<double>>& set) {
      std::vector<double> table(count * D, 0.0);
      for (const auto& [row, values] : set) std::copy(values.begin(), values.end(), table.begin() + row * D);
      return table;
    };
    set_parameter(model, "src_embed.weight",
                  rows(english.size(),
                       {{english.id("river"), {1, -1, 0, 0, 1, -1}}, {english.id("money"), {-1, 1, 0, 0, 1, -1}}}));
    set_parameter(model, "tgt_embed.weight",
                  rows(hindi.size(), {{data::Vocab::SEP, {0, 0, 1, -1, 0, 0}},
                                      {hindi.id("किनारा"), {0, 0, -1, 1, 0, 0}},
                                      {hindi.id("बैंक"), {0, 0, -1, 1, 0, 0}},
                                      {hindi.id("है"), {0, 0, -1, 1, 0, 0}}}));
    set_parameter(model, "pos_embed.weight", std::vector<double>(7 * D, 0.0));
    set_parameter(model, "attn.W_q.weight", {0, 0, 25, -25, 0, 0, /**/ 0, 0, 0, 0, 0, 0});  // (H, D)
    set_parameter(model, "attn.W_k.weight", {0, 0, 0, 0, 1, 0, /**/ 0, 0, 0, 0, 0, 0});
    set_parameter(model, "attn.W_v.weight", {1, 0, 0, 0, 0, 0, /**/ 0, 0, 0, 0, 0, 0});
    set_parameter(model, "attn.W_o.weight", {1, 0, -1, 0, 0, 0, 0, 0, 0, 0, 0, 0});  // (D, H): column 0 = (1, -1, 0 ..)
    set_parameter(model, "ln1.weight", std::vector<double>(D, 1.0));
    set_parameter(model, "ln1.bias", std::vector<double>(D, 0.0));
    for (const char* name : {"ffn.fc1.weight", "ffn.fc1.bias", "ffn.fc2.weight", "ffn.fc2.bias"}) {
      for (auto& [n, p] : model.named_parameters())
        if (n == name) set_parameter(model, name, std::vector<double>(p.numel(), 0.0));
    }
    std::vector<double> head(hindi.size() * D, 0.0), bias(hindi.size(), -100.0);
    auto head_row = [&](int64_t id, const std::vector<double>& w, double b) {
      std::copy(w.begin(), w.end(), head.begin() + id * D);
      bias[id] = b;
    };
    head_row(hindi.id("किनारा"), {5, -5, 0, 0, 0, 0}, 0);
    head_row(hindi.id("बैंक"), {-5, 5, 0, 0, 0, 0}, 0);
    head_row(hindi.id("है"), {0, 0, 0, 0, 0, 0}, 5);
    head_row(data::Vocab::EOS, {0, 0, -5, 5, 0, 0}, 0);
    set_parameter(model, "head.weight", head);
    set_parameter(model, "head.bias", bias);
  }
};

std::vector<data::CueSentence> hand_built_cues() {
  std::istringstream in(
      "split\tenglish\ttarget_positions\tcue_position\tcue\tlabel\treading_hindi\n"
      "sense_context\tthe river bank\t2\t1\triver\tbank:river\tकिनारा\n"
      "sense_context\tthe money bank\t2\t1\tmoney\tbank:money\tबैंक\n"
      "sense_context\triver bank the\t1\t0\triver\tbank:river\tकिनारा\n"
      "sense_context\tbank the money\t0\t2\tmoney\tbank:money\tबैंक\n");
  return data::parse_cues(in, "cues.tsv");
}

}  // namespace

TEST_SUITE("cues") {
TEST_CASE("a hand-built model that reads the cue through attention: cue attention 1.0, cue knockout flips 100%") {
  HandBuiltCueModel m;
  CHECK(m.model.translate({{"the", "river", "bank"}}, m.english, m.hindi)[0] == std::vector<std::string>{"किनारा"});
  CHECK(m.model.translate({{"bank", "the", "money"}}, m.english, m.hindi)[0] == std::vector<std::string>{"बैंक"});
  const models::CueReport r = models::measure_cues(m.model, hand_built_cues(), m.english, m.hindi, 1);
  CHECK(r.sentences == 4);
  CHECK(r.trials == 4);
  REQUIRE(r.layers.size() == 1);
  CHECK(r.layers[0].cue_mean == doctest::Approx(1.0).epsilon(1e-6));
  CHECK(r.layers[0].baseline_mean < 0.5);
  CHECK(r.layers[0].cue_above_fraction == 1.0);
  CHECK(r.cue_flip_rate() == 1.0);
  CHECK(r.random_flip_rate() == 0.0);
  CHECK(r.random_changes == 0);
  CHECK(r.cue_flip_rate_all_queries() == 1.0);
  CHECK(r.random_flip_rate_all_queries() == 0.0);
}
}

TEST_SUITE("sense probe") {
TEST_CASE("the probe scores separable senses 100% and identical vectors at chance") {
  std::vector<std::vector<double>> features;
  std::vector<int> labels;
  std::vector<bool> fit;
  Generator gen(3);
  for (int i = 0; i < 200; ++i) {
    const int sense = i % 2;
    features.push_back({gen.normal() + (sense ? 3.0 : -3.0), gen.normal(), gen.normal()});
    labels.push_back(sense);
    fit.push_back(i < 100);
  }
  CHECK(models::probe_accuracy(features, labels, fit) == 1.0);
  // the sense only in a direction no single feature shows: still found (the fit is multivariate)
  for (auto& f : features) f = {f[0] + f[1], f[0] - f[1], f[2]};
  CHECK(models::probe_accuracy(features, labels, fit) == 1.0);
  // labels that the features do not carry: chance, not 100%
  for (auto& f : features) f = {1.5, -2.0, 0.25};
  CHECK(models::probe_accuracy(features, labels, fit) == 0.5);
  CHECK_THROWS_WITH(models::probe_accuracy(features, labels, std::vector<bool>(200, true)),
                    "sense probe: needs rows to fit and rows to score");
}

TEST_CASE("sense examples: one word, one reading per sentence, both senses the same number, half to fit") {
  auto pair = [](const char* english, const char* hindi) {
    return data::SentencePair{data::tokenize(english), data::tokenize(hindi), "pairs"};
  };
  const std::vector<data::SentencePair> pairs = {pair("the river bank", "नदी का किनारा"),
                                                 pair("the money bank", "पैसे का बैंक"),
                                                 pair("a river bank", "एक किनारा"),
                                                 pair("a money bank", "एक बैंक"),
                                                 pair("bank and bank", "बैंक और किनारा"),  // the word twice: skipped
                                                 pair("the bank", "बैंक और किनारा"),       // both readings: skipped
                                                 pair("a river", "एक नदी"),              // no bank
                                                 pair("the big river bank", "बड़ा किनारा")};
  const std::vector<data::SenseWord> words = data::sense_examples(pairs, hand_built_cues(), 10, 1);
  REQUIRE(words.size() == 1);
  CHECK(words[0].word == "bank");
  CHECK(words[0].examples.size() == 4);  // 2 money, so 2 of the 3 river ones
  int per_sense[2] = {0, 0}, fitted = 0;
  for (const auto& e : words[0].examples) {
    per_sense[e.sense]++;
    fitted += e.probe_train;
    CHECK(e.english[e.position] == "bank");
  }
  CHECK(per_sense[0] == 2);
  CHECK(per_sense[1] == 2);
  CHECK(fitted == 2);
  CHECK(data::sense_examples(pairs, hand_built_cues(), 1, 1)[0].examples.size() == 2);
}

TEST_CASE("word vectors per layer: the input is token + position, and only attention brings in the context") {
  HandBuiltCueModel m;
  const auto states =
      models::source_word_states(m.model, {{"the", "river", "bank"}, {"the", "money", "bank"}}, {2, 2}, m.english);
  REQUIRE(states.size() == 2);          // the input and block 1
  CHECK(states[0][0] == states[0][1]);  // bank's embedding is the same in both
  CHECK(states[1][0] != states[1][1]);  // after attention it is not: bank's query reads the cue's value
  data::Layout layout{4, 3};
  Generator gen(2);
  models::Translator none(
      testing::test_config({6, 2, 4}, m.english.size(), m.hindi.size(), layout, models::AttentionMode::None, 2), gen);
  const auto alone =
      models::source_word_states(none, {{"the", "river", "bank"}, {"the", "money", "bank"}}, {2, 2}, m.english);
  REQUIRE(alone.size() == 3);
  for (const auto& layer : alone) CHECK(layer[0] == layer[1]);  // no attention: no context, at any depth
  CHECK_THROWS_WITH(models::source_word_states(none, {{"the"}}, {1}, m.english),
                    "source_word_states: word position 1 of a 1-word sentence (the model reads at most 4)");
}
}
