// tests/program/test_decode.cpp — greedy decoding with the key/value cache against recomputing the whole
// prefix at every step: the same logits at every step (to float32 rounding: a gemm over fewer rows
// may round the last bit differently, measured up to 2e-7) and the same translations.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include "data/dataset.h"
#include "framework/autograd.h"
#include "framework/ops.h"
#include "framework/random.h"
#include "models/translator.h"
#include "models/translator_io.h"
#include "tests/test_config.h"

using namespace qkv;

namespace {

// Every step's logits, feeding scripted ids as the next inputs, so that both paths decode every
// step of every row whatever the model predicts; after step t, rows go on from rows reorders[t].
std::vector<std::vector<double>> step_logits(models::Translator& model, const Tensor& source,
                                             const std::vector<int64_t>& lengths, bool cache, int64_t vocab,
                                             const std::map<int64_t, std::vector<int64_t>>& reorders = {}) {
  models::ForwardOptions options;
  options.recompute_prefix = !cache;
  std::vector<std::vector<double>> steps;
  const int64_t B = source.size(0);
  model.decode(
      source, lengths,
      [&](const Tensor& logits, int64_t t, std::vector<int64_t>& next, std::vector<int64_t>& from) {
        steps.push_back(logits.to_vector());
        for (int64_t b = 0; b < B; ++b) next[b] = 4 + (b * 7 + t * 3) % (vocab - 4);
        if (reorders.contains(t)) from = reorders.at(t);
        return false;
      },
      options);
  return steps;
}

// The largest |a - b| relative to the larger magnitude (1 floor).
double worst_difference(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i)
    worst = std::max(worst, std::abs(a[i] - b[i]) / std::max({1.0, std::abs(a[i]), std::abs(b[i])}));
  return worst;
}

}  // namespace

TEST_SUITE("decode") {
TEST_CASE(
    "the cache gives the same logits at every step, for learned and static, 1 and 3 layers, every position scheme") {
  for (const auto positions : {models::Positions::Absolute, models::Positions::Rotary,
                               models::Positions::AbsoluteRotary, models::Positions::Alibi})
    for (const auto mode : {models::AttentionMode::Learned, models::AttentionMode::Static})
      for (const int64_t layers : {1, 3})
        for (const int64_t width : {16, 6}) {  // 16: the blocked float32 kernels; 6: the plain loops
          CAPTURE(models::positions_name(positions));
          CAPTURE(models::attention_mode_name(mode));
          CAPTURE(layers);
          CAPTURE(width);
          models::TranslatorConfig c = qkv::testing::test_config(
              {mode == models::AttentionMode::Static ? width : 12, width, 20}, 30, 25, {7, 9}, mode, layers);
          c.positions = positions;
          Generator gen(5);
          models::Translator model(c, gen);
          model.train(false);
          // a relative model's first row is longer than the layout's 7 words: its rotary gain is not 1
          const int64_t S = model.reads_longer() ? 10 : 7;
          std::vector<int64_t> ids;
          for (int64_t i = 0; i < 3 * S; ++i) ids.push_back(4 + static_cast<int64_t>(gen.below(26)));
          const Tensor source = Tensor::from_ids(ids, {3, S});
          const std::vector<int64_t> lengths = {S, 3, 1};
          const auto cached = step_logits(model, source, lengths, true, c.target_vocab);
          const auto recomputed = step_logits(model, source, lengths, false, c.target_vocab);
          // the longest row's limit and <eos>: the layout's 9 slots, or 2 x 10 + 10 + 1 past a relative layout
          const size_t steps = static_cast<size_t>(model.decode_limit(S) + 1);
          CHECK(steps == (model.reads_longer() ? 31 : 9));
          REQUIRE(cached.size() == steps);
          REQUIRE(recomputed.size() == steps);
          for (size_t t = 0; t < cached.size(); ++t) {
            CAPTURE(t);
            CHECK(worst_difference(cached[t], recomputed[t]) < 1e-6);
          }
        }
}

TEST_CASE("rows that go on from other rows (beam search) get the same logits with and without the cache") {
  for (const auto positions : {models::Positions::Absolute, models::Positions::Rotary, models::Positions::Alibi}) {
    CAPTURE(models::positions_name(positions));
    models::TranslatorConfig c =
        qkv::testing::test_config({12, 16, 20}, 30, 25, {7, 9}, models::AttentionMode::Learned, 2);
    c.positions = positions;
    Generator gen(7);
    models::Translator model(c, gen);
    model.train(false);
    std::vector<int64_t> ids;
    for (int64_t i = 0; i < 3 * 7; ++i) ids.push_back(4 + static_cast<int64_t>(gen.below(26)));
    const Tensor source = Tensor::from_ids(ids, {3, 7});
    const std::map<int64_t, std::vector<int64_t>> reorders = {{1, {2, 0, 0}}, {3, {1, 2, 0}}};
    const auto cached = step_logits(model, source, {5, 5, 5}, true, c.target_vocab, reorders);
    const auto recomputed = step_logits(model, source, {5, 5, 5}, false, c.target_vocab, reorders);
    const auto plain = step_logits(model, source, {5, 5, 5}, true, c.target_vocab);
    REQUIRE(cached.size() == recomputed.size());
    for (size_t t = 0; t < cached.size(); ++t) {
      CAPTURE(t);
      CHECK(worst_difference(cached[t], recomputed[t]) < 1e-6);
    }
    CHECK(worst_difference(cached[0], plain[0]) < 1e-6);  // before any reorder
    CHECK(worst_difference(cached[2], plain[2]) > 1e-3);  // row 0 now reads row 2's source and prefix
    // rows of another source length cannot be joined
    for (const bool cache : {true, false})
      CHECK_THROWS_AS(step_logits(model, source, {5, 4, 5}, cache, c.target_vocab, {{0, {1, 1, 2}}}), std::logic_error);
  }
}

TEST_CASE("the trained twin fixture translates the test split identically with and without the cache") {
  models::LoadedTranslator m = models::load_translator("tests/fixtures/twin_model.safetensors");
  m.model->train(false);
  const std::vector<data::SentencePair> pairs = data::load_pairs("data/idioms/test.tsv");
  std::vector<std::vector<std::string>> english;
  for (size_t i = 0; i < 300 && i < pairs.size(); ++i)
    if (static_cast<int64_t>(pairs[i].english.size()) <= m.model->config().layout.max_source)
      english.push_back(pairs[i].english);
  REQUIRE(english.size() > 100);
  const auto cached = m.model->translate(english, m.english, m.hindi);
  const auto recomputed = m.model->translate(english, m.english, m.hindi, {.recompute_prefix = true});
  CHECK(cached == recomputed);
}
}
