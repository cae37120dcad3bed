// tests/program/test_attend.cpp — what `qkv attend` and `qkv demo` show is what the model computed:
// traced weights equal the model's own attention, rows sum to 1, masked cells are zero, the
// rendered cells carry those weights, and the bank table's static-embedding cosine is 1.0.
#include <doctest/doctest.h>

#include <cmath>

#include "data/dataset.h"
#include "framework/autograd.h"
#include "train/experiments/tutorial/tutorial_example.h"
#include "models/translator_io.h"
#include "tools/render/render.h"

using namespace qkv;

namespace {
const char* kModel = "tests/fixtures/twin_model.safetensors";

render::HeatmapSpec spec_for(const models::AttentionTrace& t) {
  render::HeatmapSpec spec;
  spec.title = "test";
  spec.row_labels = spec.col_labels = t.labels;
  spec.values = t.weights;
  spec.masked = t.masked;
  return spec;
}
}  // namespace

TEST_SUITE("attend") {
TEST_CASE("traced attention equals the model's weights; rows sum to 1; masked cells are zero") {
  models::LoadedTranslator m = models::load_translator(kModel);
  const std::vector<std::string> english = data::tokenize("she ate a piece of cake");
  const models::AttentionTrace trace = models::trace_attention(*m.model, english, m.english, m.hindi, 0);
  const size_t n = trace.labels.size();
  REQUIRE(n == english.size() + 1 + trace.hindi.size());
  REQUIRE(trace.weights.size() == n * n);
  CHECK(trace.labels[english.size()] == "<sep>");

  // Recompute the same forward pass by hand and compare cell by cell.
  data::SentencePair pair{english, trace.hindi, "test"};
  const data::Batch batch = data::make_batch({pair}, {0}, m.english, m.hindi, m.model->config().layout);
  {
    NoGradGuard no_grad;
    m.model->forward(batch, {.record_attention = true});
  }
  const std::vector<double> full = m.model->last_attention().to_vector();
  const int64_t T = m.model->config().layout.length(), S = m.model->config().layout.max_source;
  std::vector<int64_t> positions;
  for (size_t i = 0; i < english.size(); ++i) positions.push_back(static_cast<int64_t>(i));
  for (size_t i = 0; i <= trace.hindi.size(); ++i) positions.push_back(S + static_cast<int64_t>(i));
  for (size_t i = 0; i < n; ++i) {
    double row_sum = 0;
    for (size_t j = 0; j < n; ++j) {
      const double w = trace.weights[i * n + j];
      CHECK(w == full[positions[i] * T + positions[j]]);
      if (trace.masked[i * n + j]) CHECK(w == 0.0);
      row_sum += w;
    }
    CHECK(std::fabs(row_sum - 1.0) < 1e-5);
  }
  // target queries never see later target keys (causal), source queries never see the target
  CHECK(trace.masked[0 * n + english.size()] == 1);
  if (!trace.hindi.empty()) CHECK(trace.masked[english.size() * n + english.size() + 1] == 1);
}

TEST_CASE("the rendered heatmap cells carry exactly the traced weights") {
  models::LoadedTranslator m = models::load_translator(kModel);
  const models::AttentionTrace trace =
      models::trace_attention(*m.model, data::tokenize("money bank grows"), m.english, m.hindi, 0);
  const render::HeatmapSpec spec = spec_for(trace);
  const render::Image image = render::render_heatmap(spec);
  const render::HeatmapLayout layout = render::heatmap_layout(spec);
  const size_t n = trace.labels.size();
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j) {
      if (trace.masked[i * n + j]) continue;
      const render::LabelBox box = layout.cell_box(static_cast<int>(i), static_cast<int>(j));
      // the cell centre may hold the printed value, so sample just inside the cell's corner
      CHECK(image.get(box.x0 + 3, box.y0 + 3) == render::viridis(trace.weights[i * n + j]));
    }
}

TEST_CASE("bank table: a static embedding gives bank the same vector in both sentences, attention does not") {
  models::LoadedTranslator m = models::load_translator(kModel);
  const auto money = data::tokenize("money bank grows"), river = data::tokenize("river bank flows");
  // [layer][sentence]: bank (word 1 of each) as the input embedding, then after block 1
  const auto states = models::source_word_states(*m.model, {money, river}, {1, 1}, m.english);
  REQUIRE(states.size() >= 2);
  REQUIRE(states[0].size() == 2);
  auto vector_of = [](const std::vector<double>& v) {
    return Tensor::from_vector(v, {static_cast<int64_t>(v.size())});
  };
  const double cos_static = models::cosine_similarity(vector_of(states[0][0]), vector_of(states[0][1]));
  CHECK(std::fabs(cos_static - 1.0) < 1e-6);
  const double cos_context = models::cosine_similarity(vector_of(states[1][0]), vector_of(states[1][1]));
  CHECK(cos_context < 0.999);  // attention mixes in money vs river
}

TEST_CASE("attention mode none: each token sees only itself") {
  models::LoadedTranslator m = models::load_translator(kModel);
  models::TranslatorConfig config = m.model->config();
  config.attention = models::AttentionMode::None;
  Generator gen(3);
  models::Translator none(config, gen);
  none.train(false);
  const models::AttentionTrace trace =
      models::trace_attention(none, data::tokenize("river bank flows"), m.english, m.hindi, 0);
  const size_t n = trace.labels.size();
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j) CHECK(trace.weights[i * n + j] == (i == j ? 1.0 : 0.0));
  CHECK(none.attention_parameter_count() == 0);
  CHECK(m.model->attention_parameter_count() == 4 * config.d_model * config.d_k);
}
}
