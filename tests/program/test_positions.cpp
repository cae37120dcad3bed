// tests/program/test_positions.cpp — where word order enters the translator: the config's "positions" field
// (absolute when missing), rotary and ALiBi positions that depend on distances alone (the same
// logits whatever the padding; ALiBi's bias measured in the weights), the layout a model reads (a rotary model reads and translates sentences
// longer than its layout; an absolute one refuses them by name), and knockouts under rotary.
// Packed, cached, fused and composed paths under every scheme are tests/program/test_layers.cpp's and
// tests/program/test_decode.cpp's; the rotary op's gradient check is in the op table.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "data/dataset.h"
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

}  // namespace

TEST_SUITE("positions") {
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
    Generator gen(3);
    models::Translator model(small_config(positions), gen);
    model.to(DType::F64);
    model.train(false);
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
  CHECK(rotary.decode_length(9) == 5 + 2 * 5);
  const auto out = rotary.translate({longer, {"a", "b"}}, english, hindi);
  REQUIRE(out.size() == 2);
  CHECK(out[0].size() <= 14);  // decode_length(9) - 1 words at most
  // the cached and recomputed decodings agree past the layout too
  CHECK(rotary.translate({longer, {"a", "b"}}, english, hindi, {.recompute_prefix = true}) == out);
  // a knockout of a source word past the layout is honoured (the key exists at position 8)
  models::ForwardOptions knock;
  knock.knockout = {.key = 8, .query_from = 0, .query_to = 9 + rotary.decode_length(9), .layer = -1};
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
    Generator gen(9);
    models::Translator model(small_config(positions), gen);
    model.to(DType::F64);
    model.train(false);
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
  Generator gen(2);
  models::Translator model(c, gen);
  model.to(DType::F64);
  model.train(false);
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
