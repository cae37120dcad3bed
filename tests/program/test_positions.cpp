// tests/program/test_positions.cpp — where word order enters the translator: the config's "positions" field
// (absolute when missing), rotary and ALiBi positions that depend on distances alone (the same
// logits whatever the padding; ALiBi's bias measured in the weights), the layout a model reads (a rotary model reads and translates sentences
// longer than its layout; an absolute one refuses them by name), and knockouts under rotary.
// Packed, cached, fused and composed paths under every scheme are tests/program/test_layers.cpp's and
// tests/program/test_decode.cpp's; the rotary op's gradient check is in the op table.
#include <doctest/doctest.h>

#include <fmt/format.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "framework/text_util.h"
#include "framework/autograd.h"
#include "framework/ops.h"
#include "models/translator.h"
#include "tests/test_config.h"
#include "tests/test_util.h"

using namespace qkv;
using qkv::testing::error_of;

namespace {

models::TranslatorConfig small_config(models::Positions positions, int64_t layers = 2) {
  models::TranslatorConfig c =
      qkv::testing::test_config({8, 6, 12}, 20, 18, {4, 5}, models::AttentionMode::Learned, layers);
  c.positions = positions;
  return c;
}

// One sentence of `words` ids (English 4 + i) with the target prefix `target` (Hindi ids), its
// source padded to S slots.
data::Batch padded_batch(const std::vector<int64_t>& words, const std::vector<int64_t>& target, int64_t S) {
  std::vector<int64_t> source(static_cast<size_t>(S), data::Vocab::PAD);
  for (size_t i = 0; i < words.size(); ++i) source[i] = words[i];
  data::Batch b;
  b.source = Tensor::from_ids(source, {1, S});
  b.target_input = Tensor::from_ids(target, {1, static_cast<int64_t>(target.size())});
  b.source_lengths = {static_cast<int64_t>(words.size())};
  return b;
}

double largest_difference(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::fabs(a[i] - b[i]));
  return worst;
}

// A float64 model of config `c` in evaluation mode, its weights drawn from `seed`.
std::unique_ptr<models::Translator> eval_model(const models::TranslatorConfig& c, uint64_t seed) {
  Generator gen(seed);
  auto model = std::make_unique<models::Translator>(c, gen);
  model->to(DType::F64);
  model->train(false);
  return model;
}

}  // namespace

TEST_SUITE("positions") {
TEST_CASE("--rotary-base: the base of the rotary angles, saved only when it is not RoFormer's 10000") {
  models::TranslatorConfig c = small_config(models::Positions::Rotary);
  CHECK(c.rotary_base == 10000.0);
  CHECK(c.to_json().find("rotary_base") == std::string::npos);  // checkpoints before it stay byte-identical
  CHECK(models::TranslatorConfig::from_json(c.to_json()).rotary_base == 10000.0);
  c.rotary_base = 100;
  CHECK(c.to_json().find("\"rotary_base\":100.0") != std::string::npos);
  CHECK(models::TranslatorConfig::from_json(c.to_json()).rotary_base == 100.0);
  // the same weights turned by another base give other logits; position 0 alone turns by no angle
  Generator gen_a(3), gen_b(3);
  models::Translator base_default(small_config(models::Positions::Rotary), gen_a), base_100(c, gen_b);
  NoGradGuard no_grad;
  const data::Batch b = padded_batch({5, 9, 7}, {data::Vocab::SEP, 6, 11}, 4);
  CHECK(largest_difference(base_default.forward(b).to_vector(), base_100.forward(b).to_vector()) > 1e-4);
  const data::Batch one = padded_batch({5}, {data::Vocab::SEP}, 1);  // positions 0 and 1
  const double one_apart = largest_difference(base_default.forward(one).to_vector(), base_100.forward(one).to_vector());
  CHECK(one_apart > 0);
  for (double bad : {1.0, 0.0, -5.0, 2e9}) {
    c.rotary_base = bad;
    CHECK(error_of([&] { c.validate(); }) ==
          fmt::format("model config: rotary_base must be in [2, 1000000000], got {}", bad));
  }
  models::TranslatorConfig absolute = small_config(models::Positions::Absolute);
  absolute.rotary_base = 100;  // a base without a turn to give it: refused
  CHECK(error_of([&] { absolute.validate(); }).find("rotary_base 100 turns rotary positions, and absolute positions") !=
        std::string::npos);
  std::string text = small_config(models::Positions::Rotary).to_json();
  text.insert(text.size() - 1, ",\"rotary_base\":\"ten\"");
  CHECK(error_of([&] { models::TranslatorConfig::from_json(text); }) ==
        "model config: 'rotary_base' is missing or not a number");
}

TEST_CASE("--length-scale: a sentence past the layout attends as if its queries and keys grew by the gain") {
  models::TranslatorConfig c = small_config(models::Positions::Rotary);  // max_source M = 4
  CHECK(c.length_scale == 1.5);
  CHECK(c.to_json().find("length_scale") == std::string::npos);  // checkpoints before it stay byte-identical
  CHECK(c.rotary_gain(4) == 1.0);
  CHECK(c.rotary_gain(9) == doctest::Approx(std::pow(std::log(9.0) / std::log(4.0), 0.75)).epsilon(1e-15));
  models::TranslatorConfig off = c;
  off.length_scale = 0;
  CHECK(off.rotary_gain(9) == 1.0);
  CHECK(models::TranslatorConfig::from_json(off.to_json()).length_scale == 0.0);
  CHECK(small_config(models::Positions::Alibi).rotary_gain(9) == 1.0);  // no rotary tables to scale
  // the scaled model equals the unscaled one with every W_q and W_k multiplied by the gain (scores
  // by its square) for a 9-word sentence, and is the unscaled model itself for a 4-word one
  Generator gen_a(5), gen_b(5);
  models::Translator scaled(c, gen_a), plain(off, gen_b);
  scaled.to(DType::F64);
  plain.to(DType::F64);
  scaled.train(false);
  plain.train(false);
  NoGradGuard no_grad;
  const data::Batch fits = padded_batch({5, 9, 7, 6}, {data::Vocab::SEP, 6, 11}, 4);
  CHECK(largest_difference(scaled.forward(fits).to_vector(), plain.forward(fits).to_vector()) == 0.0);
  const data::Batch longer = padded_batch({5, 9, 7, 6, 8, 5, 9, 7, 6}, {data::Vocab::SEP, 6, 11}, 9);
  const std::vector<double> unscaled = plain.forward(longer).to_vector();
  for (auto& [name, p] : plain.named_parameters())
    if (name.find("W_q.") != std::string::npos || name.find("W_k.") != std::string::npos)
      p.copy_(mul_scalar(p, c.rotary_gain(9)));
  const std::vector<double> expected = plain.forward(longer).to_vector();
  CHECK(largest_difference(scaled.forward(longer).to_vector(), expected) < 1e-12);
  CHECK(largest_difference(expected, unscaled) > 1e-6);
  // the packed loss (taken where there is padding) scales the same rows
  data::Batch with_output = padded_batch({5, 9, 7, 6, 8, 5, 9, 7, 6}, {data::Vocab::SEP, 6, 11}, 10);
  with_output.target_output = Tensor::from_ids({6, 11, data::Vocab::EOS}, {1, 3});
  with_output.target_lengths = {3};
  CHECK(scaled.loss(with_output).item() ==
        doctest::Approx(cross_entropy(scaled.forward(with_output), with_output.target_output, data::Vocab::PAD).item())
            .epsilon(1e-12));
  for (double bad : {-0.5, 8.5}) {
    models::TranslatorConfig wrong = c;
    wrong.length_scale = bad;
    CHECK(error_of([&] { wrong.validate(); }) ==
          fmt::format("model config: length_scale must be in [0, 8], got {}", bad));
  }
  models::TranslatorConfig alibi = small_config(models::Positions::Alibi);
  alibi.length_scale = 1;
  CHECK(error_of([&] { alibi.validate(); }).find("length_scale 1 scales rotary positions, and alibi positions") !=
        std::string::npos);
}

TEST_CASE("config: 'positions' is written only when not absolute, read as absolute when missing, and checked") {
  models::TranslatorConfig c = small_config(models::Positions::Absolute);
  CHECK(c.to_json().find("positions") == std::string::npos);  // absolute checkpoints stay byte-identical
  CHECK(models::TranslatorConfig::from_json(c.to_json()).positions == models::Positions::Absolute);
  for (auto p : {models::Positions::Rotary, models::Positions::AbsoluteRotary, models::Positions::Alibi}) {
    c.positions = p;
    CHECK(c.to_json().find("\"positions\":\"" + models::positions_name(p) + "\"") != std::string::npos);
    CHECK(models::TranslatorConfig::from_json(c.to_json()).positions == p);
  }
  // frozen embeddings (issue 36): written only when true, read back, and checked
  CHECK(c.to_json().find("frozen_embeddings") == std::string::npos);
  models::TranslatorConfig frozen = c;
  frozen.frozen_embeddings = true;
  CHECK(models::TranslatorConfig::from_json(frozen.to_json()).frozen_embeddings);
  std::string not_bool = frozen.to_json();
  not_bool.replace(not_bool.find("true"), 4, "1");
  CHECK(error_of([&] {
          models::TranslatorConfig::from_json(not_bool);
        }).find("'frozen_embeddings' is not true or false") != std::string::npos);
  std::string bad = c.to_json();
  bad.replace(bad.find("alibi"), 5, "sinusoid");
  CHECK(error_of([&] { models::TranslatorConfig::from_json(bad); }).find("unknown positions 'sinusoid'") !=
        std::string::npos);
  // rotary turns pairs of features: an odd head width is refused naming the option
  models::TranslatorConfig odd = small_config(models::Positions::Rotary);
  odd.d_k = 5;
  CHECK(error_of([&] { odd.validate(); }).find("head width must be even, got 5 (--d-k)") != std::string::npos);
  // a rotary model has no position embedding: fewer parameters, none named pos_embed
  Generator gen(1);
  models::Translator rotary(small_config(models::Positions::Rotary), gen);
  CHECK(rotary.parameter_count() == rotary.config().parameter_count());
  for (const auto& [name, t] : rotary.named_parameters()) CHECK(name != "pos_embed.weight");
  Generator gen2(1);
  models::Translator absolute(small_config(models::Positions::Absolute), gen2);
  CHECK(absolute.parameter_count() - rotary.parameter_count() == 9 * 8);  // (S + T_tgt) x D
}

TEST_CASE("rotary and alibi logits depend on distances alone: the same whatever the source padding") {
  // English word i sits at i and target slot t at n_src + t, so padding the source to more slots
  // moves no token's rotary position or ALiBi distance. With an absolute embedding the padding is
  // the layout.
  for (auto positions : {models::Positions::Rotary, models::Positions::Alibi, models::Positions::Absolute}) {
    CAPTURE(models::positions_name(positions));
    const std::unique_ptr<models::Translator> owned = eval_model(small_config(positions), 3);
    models::Translator& model = *owned;
    NoGradGuard no_grad;
    const std::vector<int64_t> words = {5, 9, 7}, target = {data::Vocab::SEP, 6, 11};
    const std::vector<double> at_layout = model.forward(padded_batch(words, target, 4)).to_vector();
    if (positions == models::Positions::Absolute) {
      CHECK(error_of([&] { model.forward(padded_batch(words, target, 7)); }).find("does not fit the model's (4, 5)") !=
            std::string::npos);
      continue;
    }
    const std::vector<double> wider = model.forward(padded_batch(words, target, 7)).to_vector();
    CHECK(largest_difference(at_layout, wider) < 1e-12);
    // and the packed loss with the wider padding equals the padded forward's
    data::Batch b = padded_batch(words, target, 7);
    b.target_output = Tensor::from_ids({6, 11, data::Vocab::EOS}, {1, 3});
    b.target_lengths = {3};
    const double packed = model.loss(b).item();
    const double padded = cross_entropy(model.forward(b), b.target_output, data::Vocab::PAD).item();
    CHECK(packed == doctest::Approx(padded).epsilon(1e-12));
    // the positions matter: the same words in another order give other logits
    const std::vector<double> swapped = model.forward(padded_batch({9, 5, 7}, target, 4)).to_vector();
    CHECK(largest_difference(at_layout, swapped) > 1e-6);
  }
}

TEST_CASE("a rotary model reads and translates past its layout; an absolute one refuses by name") {
  data::Vocab english = data::Vocab::build({{"a", "b", "c", "d", "e", "f", "g", "h", "i"}});
  data::Vocab hindi = data::Vocab::build({{"x", "y", "z"}});
  const std::vector<std::string> longer = {"a", "b", "c", "d", "e", "f", "g", "h", "i"};  // 9 > S = 4
  models::TranslatorConfig c = small_config(models::Positions::Rotary);
  c.source_vocab = english.size();
  c.target_vocab = hindi.size();
  Generator gen(4);
  models::Translator rotary(c, gen);
  rotary.train(false);
  CHECK(rotary.reads_longer());
  const data::Layout grown = rotary.layout_fitting(9, 7);
  CHECK(grown.max_source == 9);
  CHECK(grown.max_target == 7);
  CHECK(rotary.layout_fitting(2, 1).max_source == 2);  // its own sentence's length, not the layout's 4
  CHECK(rotary.decode_limit(9) == 2 * 9 + models::Translator::kDecodeMargin);
  CHECK(rotary.decode_limit(9, 3) == 3);
  const auto out = rotary.translate({longer, {"a", "b"}}, english, hindi);
  REQUIRE(out.size() == 2);
  CHECK(out[0].size() <= static_cast<size_t>(rotary.decode_limit(9)));
  CHECK(out[1].size() <= static_cast<size_t>(rotary.decode_limit(2)));
  // the cached and recomputed decodings agree past the layout too
  CHECK(rotary.translate({longer, {"a", "b"}}, english, hindi, {.recompute_prefix = true}) == out);
  // a knockout of a source word past the layout is honoured (the key exists at position 8)
  models::ForwardOptions knock;
  knock.knockout = {.key = 8, .query_from = 0, .query_to = 9 + rotary.decode_limit(9) + 1, .layer = -1};
  CHECK_NOTHROW(rotary.translate({longer}, english, hindi, knock));

  c.positions = models::Positions::Absolute;
  Generator gen2(4);
  models::Translator absolute(c, gen2);
  CHECK_FALSE(absolute.reads_longer());
  CHECK(error_of([&] {
          absolute.translate({longer}, english, hindi);
        }).find("the sentence has 9 words; this model reads at most 4 (its absolute positions") != std::string::npos);
  CHECK(error_of([&] { absolute.layout_fitting(9, 3); }).find("longer than this model's layout (4 source, 5 target") !=
        std::string::npos);
}

TEST_CASE("rotary and alibi: a knockout takes effect and the fused and composed paths agree under it") {
  for (auto positions : {models::Positions::Rotary, models::Positions::Alibi}) {
    CAPTURE(models::positions_name(positions));
    const std::unique_ptr<models::Translator> owned = eval_model(small_config(positions), 9);
    models::Translator& model = *owned;
    NoGradGuard no_grad;
    const data::Batch b = padded_batch({5, 9, 7}, {data::Vocab::SEP, 6, 11}, 4);
    const models::ForwardOptions knock{.knockout = {.key = 1, .query_from = 4, .query_to = 7, .layer = -1}};
    const std::vector<double> plain = model.forward(b).to_vector();
    const std::vector<double> fused = model.forward(b, knock).to_vector();
    models::ForwardOptions composed = knock;
    composed.record_attention = true;
    const std::vector<double> recorded = model.forward(b, composed).to_vector();
    CHECK(largest_difference(fused, recorded) < 1e-12);
    CHECK(largest_difference(plain, fused) > 1e-6);
    // the recorded weights hide the key from the target queries
    const std::vector<double> w = model.last_attention(1).to_vector();  // (1, 7, 7)
    for (int64_t q = 4; q < 7; ++q) CHECK(w[q * 7 + 1] == 0.0);
  }
}

TEST_CASE("alibi: the recorded weights carry the bias -1/8 per word of distance") {
  // A static model whose embeddings are zero has equal scores everywhere, so each row's weights
  // are softmax(-|pos(i) - pos(j)| / 8) over its visible keys alone: the bias, measured.
  models::TranslatorConfig c = small_config(models::Positions::Alibi, 1);
  c.attention = models::AttentionMode::Static;
  const std::unique_ptr<models::Translator> owned = eval_model(c, 2);
  models::Translator& model = *owned;
  NoGradGuard no_grad;
  for (auto& [name, p] : model.named_parameters())
    if (name.find("embed") != std::string::npos) p.copy_(mul_scalar(p, 0.0));
  const data::Batch b = padded_batch({5, 9}, {data::Vocab::SEP, 6}, 4);  // n_src = 2, 2 padding slots
  model.forward(b, {.record_attention = true});
  const std::vector<double> w = model.last_attention(0).to_vector();  // (1, 6, 6)
  // the target query at slot 1 (sequence index 5, position n_src + 1 = 3) sees English 0, 1 and
  // target slots 0, 1 (positions 2, 3): distances 3, 2, 1, 0
  const double e3 = std::exp(-3 * 0.125), e2 = std::exp(-2 * 0.125), e1 = std::exp(-0.125), total = e3 + e2 + e1 + 1;
  CHECK(w[5 * 6 + 0] == doctest::Approx(e3 / total).epsilon(1e-12));
  CHECK(w[5 * 6 + 1] == doctest::Approx(e2 / total).epsilon(1e-12));
  CHECK(w[5 * 6 + 4] == doctest::Approx(e1 / total).epsilon(1e-12));
  CHECK(w[5 * 6 + 5] == doctest::Approx(1 / total).epsilon(1e-12));
  CHECK(w[5 * 6 + 2] == 0.0);  // padding
}
}

TEST_CASE("decode limits: each sentence has its own, so its translation never depends on the rest of the batch") {
  data::Vocab english = data::Vocab::build({{"a", "b", "c", "d", "e", "f", "g", "h", "i"}});
  data::Vocab hindi = data::Vocab::build({{"x", "y", "z", "w", "v"}});
  const std::vector<std::string> alone = {"c", "a", "b"}, longer = {"a", "b", "c", "d", "e", "f", "g", "h", "i"},
                                 fitting = {"d", "e", "f", "g"};  // 4: the layout's longest
  for (auto p : {models::Positions::Absolute, models::Positions::Rotary, models::Positions::AbsoluteRotary,
                 models::Positions::Alibi}) {
    CAPTURE(models::positions_name(p));
    models::TranslatorConfig c = small_config(p);
    c.source_vocab = english.size();
    c.target_vocab = hindi.size();
    for (uint64_t seed : {1, 2, 3}) {
      Generator gen(seed);
      models::Translator model(c, gen);
      model.train(false);
      const auto& beside = model.reads_longer() ? longer : fitting;
      for (int64_t max_length : {0, 1, 2, 6}) {
        if (!model.reads_longer() && max_length > c.layout.max_target - 1) continue;
        std::vector<uint8_t> cut_alone, cut_together;
        models::ForwardOptions one{.max_length = max_length, .cut_at_limit = &cut_alone};
        models::ForwardOptions two{.max_length = max_length, .cut_at_limit = &cut_together};
        const auto by_itself = model.translate({alone}, english, hindi, one);
        const auto together = model.translate({beside, alone}, english, hindi, two);
        CHECK(together[1] == by_itself[0]);
        CHECK(together[0] == model.translate({beside}, english, hindi, {.max_length = max_length})[0]);
        CHECK(cut_together[1] == cut_alone[0]);
        CHECK(by_itself[0].size() <= static_cast<size_t>(model.decode_limit(3, max_length)));
        // cut exactly when the limit was filled without <eos>
        if (cut_alone[0]) CHECK(by_itself[0].size() == static_cast<size_t>(model.decode_limit(3, max_length)));
        // the recomputing decoder keeps the same limits
        models::ForwardOptions recompute{.recompute_prefix = true, .max_length = max_length};
        CHECK(model.translate({beside, alone}, english, hindi, recompute) == together);
      }
    }
    Generator gen(7);
    models::Translator model(c, gen);
    CHECK(error_of([&] { model.decode_limit(3, -1); }).find("--max-length must be in [1, 1024], got -1") !=
          std::string::npos);
    CHECK(error_of([&] { model.decode_limit(3, 5000); }).find("got 5000") != std::string::npos);
    if (model.reads_longer())
      CHECK(model.decode_limit(3) == 2 * 3 + models::Translator::kDecodeMargin);  // follows the sentence
    else
      CHECK(error_of([&] { model.decode_limit(3, 5); }).find("--max-length 5 is past this model's layout") !=
            std::string::npos);
  }
}

TEST_CASE("every size a checkpoint's config names is held to what qkv itself would write") {
  using Config = models::TranslatorConfig;
  struct Field {
    const char* name;
    int64_t Config::*value;  // nullptr: the layout's fields below
    int64_t most;            // the program's own bound: its option's range or its builder's
  };
  const Field fields[] = {
      {"layers", &Config::layers, Config::kMaxLayers},                  // --layers
      {"d_model", &Config::d_model, Config::kMaxWidth},                 // --d-model
      {"d_k", &Config::d_k, Config::kMaxWidth},                         // --d-k
      {"d_ff", &Config::d_ff, Config::kMaxFeedForward},                 // --d-ff
      {"source_vocab", &Config::source_vocab, data::Vocab::kMaxWords},  // Vocab::build
      {"target_vocab", &Config::target_vocab, data::Vocab::kMaxWords},
      {"max_source", nullptr, data::kMaxSentenceWords},      // --max-source
      {"max_target", nullptr, data::kMaxSentenceWords + 1},  // --max-target
  };
  for (const Field& f : fields) {
    CAPTURE(f.name);
    for (int64_t v : {int64_t{0}, int64_t{-1}, f.most + 1, f.most, int64_t{1}}) {
      Config c = small_config(models::Positions::Absolute);
      c.layout = {data::kMaxSentenceWords, data::kMaxSentenceWords + 1};
      if (f.value)
        c.*f.value = v;
      else if (std::string(f.name) == "max_source")
        c.layout.max_source = v;
      else
        c.layout.max_target = v;
      CAPTURE(v);
      if (v >= 1 && v <= f.most)
        CHECK_NOTHROW(c.validate());
      else
        CHECK(error_of([&] { c.validate(); }) ==
              fmt::format("model config: {} must be in [1, {}], got {}", f.name, f.most, v));
    }
  }
  // random_positions: 0, or from the layout's length to --random-positions' bound
  Config c = small_config(models::Positions::Rotary);  // layout {4, 5}
  for (int64_t v : {int64_t{-1}, Config::kMaxRandomPositions + 1}) {
    c.random_positions = v;
    CHECK(error_of([&] { c.validate(); }) ==
          fmt::format("model config: random_positions must be in [0, 4096], got {}", v));
  }
  c.random_positions = 8;
  CHECK(error_of([&] { c.validate(); }).find("random_positions must be 0 or from the layout's 9 positions to 4096") !=
        std::string::npos);
  for (int64_t v : {int64_t{0}, int64_t{9}, Config::kMaxRandomPositions}) {
    c.random_positions = v;
    CHECK_NOTHROW(c.validate());
  }
}

TEST_CASE("a vocabulary, built or read, holds at most kMaxWords real words") {
  std::vector<std::string> words = {"<pad>", "<unk>", "<sep>", "<eos>", "river"};
  CHECK(data::Vocab::from_words(words).size() == 5);
  for (const std::string& bad : {std::string(""), std::string("a b"), std::string("a\tb"), std::string("x\n"),
                                 std::string(qkv::kMaxLineBytes + 1, 'w')}) {
    std::vector<std::string> with = words;
    with.push_back(bad);
    CHECK(error_of([&] {
            data::Vocab::from_words(with);
          }).find(fmt::format("vocabulary entry 5 ({} bytes) is not a word", bad.size())) != std::string::npos);
  }
  words.resize(data::Vocab::kMaxWords + 1, "");
  for (size_t i = 4; i < words.size(); ++i) words[i] = std::to_string(i);
  CHECK(error_of([&] { data::Vocab::from_words(words); }) ==
        fmt::format("vocabulary has {} words, more than qkv's {}", words.size(), data::Vocab::kMaxWords));
  std::vector<std::vector<std::string>> sentences(1, std::vector<std::string>(words.begin() + 4, words.end()));
  CHECK(error_of([&] { data::Vocab::build(sentences); }).find("more than qkv's") != std::string::npos);
  words.pop_back();
  CHECK(data::Vocab::from_words(words).size() == data::Vocab::kMaxWords);
}

TEST_CASE("randomized rotary positions: sampled in training only, spread evenly elsewhere, every path alike") {
  models::TranslatorConfig c = small_config(models::Positions::Rotary);  // layout {4, 5}: 9 positions
  CHECK(c.position_stride() == 1);
  c.random_positions = 64;
  CHECK(c.position_stride() == 7);  // round(64 / 9)
  CHECK(models::TranslatorConfig::from_json(c.to_json()).random_positions == 64);
  CHECK(c.to_json().find("random_positions") != std::string::npos);
  models::TranslatorConfig bad = c;
  bad.positions = models::Positions::Alibi;
  CHECK(error_of([&] { bad.validate(); }).find("alibi positions have no rotary part") != std::string::npos);
  bad = c;
  bad.random_positions = 8;
  CHECK(error_of([&] { bad.validate(); }).find("from the layout's 9 positions to 4096, got 8") != std::string::npos);
  c.random_positions = 0;
  CHECK(c.to_json().find("random_positions") == std::string::npos);  // other checkpoints stay byte-identical
  c.random_positions = 64;

  data::Vocab english = data::Vocab::build({{"a", "b", "c", "d", "e", "f", "g", "h", "i"}});
  data::Vocab hindi = data::Vocab::build({{"x", "y", "z"}});
  c.source_vocab = english.size();
  c.target_vocab = hindi.size();
  Generator gen(3);
  models::Translator model(c, gen);
  model.set_dropout(0.0, 11);
  data::SentencePair p1{{"a", "b", "c"}, {"x", "y"}, "t"}, p2{{"d", "e"}, {"z", "x", "y", "z"}, "t"};
  const data::Batch batch = data::make_batch({p1, p2}, {0, 1}, english, hindi, c.layout, model.device());
  // evaluation: the packed loss and the padded forward agree (both spread the positions)
  model.train(false);
  const double packed = model.loss(batch).item();
  const double padded = cross_entropy(model.forward(batch), batch.target_output, data::Vocab::PAD).item();
  CHECK(std::abs(packed - padded) < 1e-5);
  // training: each call draws new positions, from the model's generator
  model.train(true);
  const double first = model.loss(batch).item(), second = model.loss(batch).item();
  CHECK(first != second);
  model.set_dropout(0.0, 11);
  CHECK(model.loss(batch).item() == first);  // the same draw from the same generator state
  // at even odds a sequence takes the positions translation gives it: with both pairs spread
  // evenly the training loss is the evaluation's (about a quarter of the draws), never otherwise
  model.train(false);
  const double spread = model.loss(batch).item();
  model.train(true);
  int evenly = 0;
  for (int draw = 0; draw < 64; ++draw) evenly += std::abs(model.loss(batch).item() - spread) < 1e-6;
  CHECK(evenly >= 6);
  CHECK(evenly <= 30);
  // rows keyed by the trainer draw from their keys alone: the same keys, the same positions
  data::Batch keyed = batch;
  keyed.row_keys = {5, 9};
  const double by_keys = model.loss(keyed).item();
  CHECK(model.loss(keyed).item() == by_keys);
  keyed.row_keys = {5, 10};
  bool other = model.loss(keyed).item() != by_keys;
  for (uint64_t k = 11; !other && k < 20; ++k) {  // (a new key may land on the same draw, evenly spread)
    keyed.row_keys = {5, k};
    other = model.loss(keyed).item() != by_keys;
  }
  CHECK(other);
  keyed.row_keys = {5};
  CHECK(error_of([&] { model.loss(keyed); }).find("1 row keys for 2 rows") != std::string::npos);
  // translation past the layout: the cache and the recomputed prefix agree under the stride
  model.train(false);
  const std::vector<std::string> longer = {"a", "b", "c", "d", "e", "f", "g", "h", "i"};
  const auto cached = model.translate({longer, {"a"}}, english, hindi);
  CHECK(model.translate({longer, {"a"}}, english, hindi, {.recompute_prefix = true}) == cached);
  // the stride is applied: the same weights without it give other logits
  models::TranslatorConfig plain = c;
  plain.random_positions = 0;
  Generator same(3);
  models::Translator unspread(plain, same);
  unspread.train(false);
  const std::vector<double> spread_logits = model.forward(batch).to_vector();
  const std::vector<double> plain_logits = unspread.forward(batch).to_vector();
  REQUIRE(spread_logits.size() == plain_logits.size());
  double largest = 0;
  for (size_t i = 0; i < spread_logits.size(); ++i)
    largest = std::max(largest, std::abs(spread_logits[i] - plain_logits[i]));
  CHECK(largest > 1e-4);
}

TEST_CASE("the oracle-length decode writes exactly the lengths it is given, for every scheme") {
  data::Vocab english = data::Vocab::build({{"a", "b", "c", "d"}});
  data::Vocab hindi = data::Vocab::build({{"x", "y", "z"}});
  for (auto p : {models::Positions::Absolute, models::Positions::Rotary, models::Positions::Alibi}) {
    CAPTURE(models::positions_name(p));
    models::TranslatorConfig c = small_config(p);
    c.source_vocab = english.size();
    c.target_vocab = hindi.size();
    Generator gen(9);
    models::Translator model(c, gen);
    model.train(false);
    const std::vector<int64_t> lengths = {0, 1, 4};  // 4: the layout's most words
    std::vector<uint8_t> cut;
    const auto out = model.translate({{"a"}, {"b", "c"}, {"d", "a", "b"}}, english, hindi,
                                     {.cut_at_limit = &cut, .exact_lengths = &lengths});
    for (size_t b = 0; b < lengths.size(); ++b) {
      CHECK(out[b].size() == static_cast<size_t>(lengths[b]));
      CHECK(cut[b] == 0);  // reaching the oracle's length is not a cut
    }
    const std::vector<int64_t> past = {5, 1, 1};
    if (!model.reads_longer())
      CHECK(error_of([&] {
              model.translate({{"a"}, {"b"}, {"c"}}, english, hindi, {.exact_lengths = &past});
            }).find("past this model's layout") != std::string::npos);
  }
}
