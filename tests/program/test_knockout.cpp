// tests/program/test_knockout.cpp — attention knockout and the cue measures: a knockout gives the same
// translation through the fused (cached) and composed paths, hides exactly its cell, changes
// nothing for a masked key; the cue statistics score a map that looks only at the cue as 1.0; the
// cue file's loader names file:line.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

#include "data/cues.h"
#include "data/dataset.h"
#include "framework/autograd.h"
#include "train/experiments/cues/cue_analysis.h"
#include "models/translator_io.h"

using namespace qkv;

namespace {
const char* kModel = "tests/fixtures/twin_model.safetensors";

std::vector<double> logits_of(models::Translator& model, const data::Batch& batch,
                              const models::ForwardOptions& options) {
  NoGradGuard no_grad;
  return model.forward(batch, options).to_vector();
}

double max_difference(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double d = 0;
  for (size_t i = 0; i < a.size(); ++i) d = std::max(d, std::fabs(a[i] - b[i]));
  return d;
}

std::string throws_message(const std::string& text) {
  std::istringstream in(text);
  try {
    data::parse_cues(in, "cues.tsv");
  } catch (const std::exception& e) { return e.what(); }
  return "";
}
}  // namespace

TEST_SUITE("knockout") {
TEST_CASE("none in every row layout: each position its own value; hiding a position from itself zeroes it alike") {
  models::LoadedTranslator m = models::load_translator(kModel);
  models::TranslatorConfig config = m.model->config();
  config.attention = models::AttentionMode::None;
  config.layers = 2;
  Generator gen(5);
  models::Translator none(config, gen);
  none.train(false);
  const std::vector<std::string> english = data::tokenize("the exam was a piece of cake");
  const std::vector<std::string> hindi = none.translate({english}, m.english, m.hindi)[0];
  const data::Layout layout = none.config().layout;
  const int64_t S = layout.max_source, T = layout.length();
  // two rows of different lengths, so that the packed loss has padding to skip
  const std::vector<std::string> shorter = data::tokenize("the exam was easy");
  const data::Batch batch = data::make_batch({{english, {"परीक्षा"}, "test"}, {shorter, {"परीक्षा", "आसान"}, "test"}},
                                             {0, 1}, m.english, m.hindi, layout);
  for (const int64_t key : {int64_t{2}, S + 1}) {  // an English position, then a Hindi one
    models::ForwardOptions plain, knocked, recorded;
    knocked.knockout = {.key = key, .query_from = 0, .query_to = T, .layer = -1};  // from every query, itself too
    recorded = knocked;
    recorded.record_attention = true;
    // the fused forward (own values, the last layer's target rows only) and the composed one agree
    const std::vector<double> fused = logits_of(none, batch, knocked);
    const std::vector<double> composed = logits_of(none, batch, recorded);  // records the weights
    CHECK(max_difference(fused, composed) < 1e-5);
    // the composed weights are the identity, with the hidden position's row empty
    const std::vector<double> w = none.last_attention(0).to_vector();
    for (int64_t i = 0; i < T; ++i)
      for (int64_t j = 0; j < T; ++j) CHECK(w[i * T + j] == (i == j && i != key ? 1.0 : 0.0));
    // hiding a Hindi position from itself changes its logits; an English one reaches no logit,
    // since under none no Hindi position reads the English
    const double change = max_difference(logits_of(none, batch, plain), logits_of(none, batch, knocked));
    if (key >= S)
      CHECK(change > 0.0);
    else
      CHECK(change == 0.0);
    // the packed loss and the padded one agree, with and without the knockout
    for (const models::ForwardOptions& o : {plain, knocked}) {
      NoGradGuard no_grad;
      models::ForwardOptions padded = o;
      padded.keep_source_positions = true;  // the padded path
      CHECK(none.loss(batch, o).item() == doctest::Approx(none.loss(batch, padded).item()).epsilon(1e-6));
    }
    // cached decoding and decoding by recomputing the prefix give the same words
    models::ForwardOptions recomputed = knocked;
    recomputed.recompute_prefix = true;
    CHECK(none.translate({english}, m.english, m.hindi, knocked) ==
          none.translate({english}, m.english, m.hindi, recomputed));
  }
  CHECK(!hindi.empty());
}

TEST_CASE("a knockout hides its cell, renormalises the row, and the fused and composed paths agree") {
  models::LoadedTranslator m = models::load_translator(kModel);
  models::Translator& model = *m.model;
  const std::vector<std::string> english = data::tokenize("the exam was a piece of cake");
  const std::vector<std::string> hindi = model.translate({english}, m.english, m.hindi)[0];
  const data::Layout layout = model.config().layout;
  const int64_t S = layout.max_source, T = layout.length();
  const data::Batch batch = data::make_batch({{english, hindi, "test"}}, {0}, m.english, m.hindi, layout);
  for (int64_t layer : {int64_t{-1}, model.layers() - 1}) {
    models::ForwardOptions knocked;
    knocked.knockout = {.key = 1, .query_from = S, .query_to = T, .layer = layer};  // "exam", every target query
    models::ForwardOptions composed = knocked;
    composed.record_attention = true;
    const std::vector<double> fused_logits = logits_of(model, batch, knocked);
    const std::vector<double> composed_logits = logits_of(model, batch, composed);
    const std::vector<double> w = model.last_attention(model.layers() - 1).to_vector();
    CHECK(max_difference(fused_logits, composed_logits) < 1e-4);
    CHECK(max_difference(fused_logits, logits_of(model, batch, {})) > 1e-3);  // it does something
    for (int64_t q = S; q < T; ++q) {
      CHECK(w[q * T + 1] == 0.0);
      double sum = 0;
      for (int64_t k = 0; k < T; ++k) sum += w[q * T + k];
      CHECK(std::fabs(sum - 1.0) < 1e-5);
    }
    // the source queries keep the key
    CHECK(w[0 * T + 1] > 0.0);
    // greedy decoding: cached (fused op, one step at a time) and recomputed (composed) agree
    const auto cached = model.translate({english}, m.english, m.hindi, knocked)[0];
    models::ForwardOptions composed_recomputed = composed;
    composed_recomputed.recompute_prefix = true;
    const auto recomputed = model.translate({english}, m.english, m.hindi, composed_recomputed)[0];
    CHECK(cached == recomputed);
  }
  // from every query, the source words' too: the fused op, the cached decoding and the composed path agree
  models::ForwardOptions everywhere;
  everywhere.knockout = {.key = 1, .query_from = 0, .query_to = T, .layer = -1};
  models::ForwardOptions everywhere_composed = everywhere;
  everywhere_composed.record_attention = true;
  const std::vector<double> everywhere_fused_logits = logits_of(model, batch, everywhere);
  CHECK(max_difference(everywhere_fused_logits, logits_of(model, batch, everywhere_composed)) < 1e-4);
  const std::vector<double> w = model.last_attention(0).to_vector();
  for (int64_t q = 0; q < T; ++q) CHECK(w[q * T + 1] == 0.0);
  const auto cached = model.translate({english}, m.english, m.hindi, everywhere)[0];
  everywhere_composed.recompute_prefix = true;
  const auto recomputed = model.translate({english}, m.english, m.hindi, everywhere_composed)[0];
  CHECK(cached == recomputed);
}

TEST_CASE("a knockout of a masked key changes nothing") {
  models::LoadedTranslator m = models::load_translator(kModel);
  models::Translator& model = *m.model;
  const std::vector<std::string> english = data::tokenize("river bank flows");
  const data::Layout layout = model.config().layout;
  const int64_t S = layout.max_source, T = layout.length();
  REQUIRE(S > 3);
  const std::vector<std::string> hindi = model.translate({english}, m.english, m.hindi)[0];
  const data::Batch batch = data::make_batch({{english, hindi, "test"}}, {0}, m.english, m.hindi, layout);
  models::ForwardOptions padding_key;  // position 3 is padding: no query sees it
  padding_key.knockout = {.key = 3, .query_from = 0, .query_to = T, .layer = -1};
  CHECK(logits_of(model, batch, padding_key) == logits_of(model, batch, {}));
  models::ForwardOptions later_key;  // the last target slot: causal, no earlier query sees it
  later_key.knockout = {.key = T - 1, .query_from = S, .query_to = T - 1, .layer = -1};
  later_key.record_attention = true;
  models::ForwardOptions plain;
  plain.record_attention = true;
  CHECK(logits_of(model, batch, later_key) == logits_of(model, batch, plain));
  CHECK(model.translate({english}, m.english, m.hindi, padding_key)[0] == hindi);
}

TEST_CASE("a knockout outside the model is refused with its values") {
  models::LoadedTranslator m = models::load_translator(kModel);
  const data::Layout layout = m.model->config().layout;
  const data::Batch batch = data::make_batch({{{"river"}, {"नदी"}, "test"}}, {0}, m.english, m.hindi, layout);
  models::ForwardOptions bad;
  bad.knockout = {.key = 0, .query_from = 0, .query_to = 1, .layer = m.model->layers()};
  CHECK_THROWS_WITH_AS(m.model->forward(batch, bad), doctest::Contains("knockout: layer"), std::runtime_error);
  bad.knockout = {.key = 500, .query_from = 0, .query_to = 1, .layer = -1};
  CHECK_THROWS_WITH_AS(m.model->forward(batch, bad), doctest::Contains("key 500"), std::runtime_error);
}
}

TEST_SUITE("cues") {
TEST_CASE("a map that puts every target query's weight on the cue scores 1.0 against 0") {
  data::CueSentence s;
  s.english = data::tokenize("river bank flows fast");
  s.target_positions = {1};
  s.cue_position = 0;
  s.source = "test";
  const int64_t S = 5, T = 9, target_rows = 3;
  std::vector<double> weights(T * T, 0.0);
  for (int64_t q = 0; q < T; ++q) weights[q * T + (q < S ? 2 : 0)] = 1.0;  // targets: all on the cue
  models::CuePeaks peaks = models::cue_peaks(weights, T, S, target_rows, s);
  CHECK(peaks.cue_peak == 1.0);
  CHECK(peaks.baseline_peak == 0.0);
  CHECK(peaks.has_baseline);
  // spread evenly over the four words: the cue is no different from the others
  for (int64_t q = S; q < T; ++q)
    for (int64_t k = 0; k < T; ++k) weights[q * T + k] = k < 4 ? 0.25 : 0.0;
  peaks = models::cue_peaks(weights, T, S, target_rows, s);
  CHECK(peaks.cue_peak == doctest::Approx(0.25));
  CHECK(peaks.baseline_peak == doctest::Approx(0.25));
  // a target row past target_rows is not read
  weights[(S + target_rows) * T + 3] = 1.0;
  CHECK(models::cue_peaks(weights, T, S, target_rows, s).baseline_peak == doctest::Approx(0.25));
}

TEST_CASE("knocking out the cue of a real model: flips are counted only where the reading was translated") {
  models::LoadedTranslator m = models::load_translator(kModel);
  std::istringstream in(
      "split\tenglish\ttarget_positions\tcue_position\tcue\tlabel\treading_hindi\n"
      "sense_context\tthe exam was a piece of cake\t4,5,6\t1\texam\tcake:idiom\tआसान\n"
      "sense_context\tshe ate a piece of cake\t3,4,5\t1\teat\tcake:literal\tटुकड़ा\n");
  const std::vector<data::CueSentence> sentences = data::parse_cues(in, "cues.tsv");
  const models::CueReport r = models::measure_cues(*m.model, sentences, m.english, m.hindi, 1);
  CHECK(r.sentences == 2);
  CHECK(r.trials <= 2);
  CHECK(r.cue_flips <= r.cue_changes);
  CHECK(r.random_flips <= r.random_changes);
  REQUIRE(r.layers.size() == static_cast<size_t>(m.model->layers()));
  for (const models::CueLayer& l : r.layers) {
    CHECK(l.cue_peaks.size() == 2);
    for (double p : l.cue_peaks) CHECK((p >= 0.0 && p <= 1.0));
  }
}

TEST_CASE("the cue file's errors name file:line and the value") {
  const std::string header = "split\tenglish\ttarget_positions\tcue_position\tcue\tlabel\treading_hindi\n";
  CHECK(throws_message("split\tenglish\n") ==
        "cues.tsv:1: expected the header '" + header.substr(0, header.size() - 1) + "'");
  CHECK(throws_message(header + "test\triver bank\t1\t0\triver\n").find("cues.tsv:2: 5 tab-separated fields") == 0);
  CHECK(throws_message(header + "test\triver bank\t1\t2\triver\tbank:river\tकिनारा\n")
            .find("cues.tsv:2: cue position '2' is not a word position of a 2-word sentence") == 0);
  CHECK(throws_message(header + "test\triver bank\t1,x\t0\triver\tbank:river\tकिनारा\n")
            .find("cues.tsv:2: target position 'x'") == 0);
  CHECK(throws_message(header + "test\triver bank\t0\t0\triver\tbank:river\tकिनारा\n")
            .find("cues.tsv:2: the cue position 0 is one of the target positions") == 0);
  CHECK(throws_message("").find("cues.tsv: empty") == 0);
  std::istringstream good(header + "test\triver bank flows\t1\t0\triver\tbank:river\tकिनारा किनारे\n");
  const auto rows = data::parse_cues(good, "cues.tsv");
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].target_positions == std::vector<int64_t>{1});
  CHECK(rows[0].reading_hindi.size() == 2);
}
}
