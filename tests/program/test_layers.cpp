// tests/program/test_layers.cpp — the translator with N stacked layers: a float64 gradient check of a whole
// two-layer model, the last layer's skipped source rows and the packed loss (padding skipped),
// none's self-only path against its composed identity weights,
// parameter names (layer 0 unchanged, layers.1.*), the generator draw order, the config's "layers"
// field, per-layer attention weights and a two-layer checkpoint round trip.
// PyTorch agreement of the one-layer model is tests/program/test_pytorch_twin.cpp's job.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <random>
#include <map>
#include <string>
#include <unistd.h>
#include <vector>

#include "data/dataset.h"
#include "framework/autograd.h"
#include "framework/checkpoint.h"
#include "framework/ops.h"
#include "tests/gradcheck.h"
#include "models/translator_io.h"
#include "tests/test_config.h"
#include "tests/test_util.h"

using namespace qkv;
using qkv::testing::error_of;

namespace {

// Three sentence pairs of different lengths (so the batch pads both sides), their vocabularies
// and a layout that fits them: S = 3, T_tgt = 4.
struct TinyData {
  std::vector<data::SentencePair> pairs = {
      {{"money", "bank", "grows"}, {"पैसा", "बढ़ता", "है"}, "tiny:1"},
      {{"river", "bank"}, {"नदी", "किनारा"}, "tiny:2"},
      {{"she", "ate", "cake"}, {"उसने", "केक", "खाया"}, "tiny:3"},
  };
  data::Vocab english, hindi;
  data::Layout layout{3, 4};
  TinyData() {
    std::vector<std::vector<std::string>> en, hi;
    for (const auto& p : pairs) en.push_back(p.english), hi.push_back(p.hindi);
    english = data::Vocab::build(en);
    hindi = data::Vocab::build(hi);
  }
  data::Batch batch() const { return data::make_batch(pairs, {0, 1, 2}, english, hindi, layout); }
};

// H = 3 with absolute positions; rotary turns pairs of features, so it takes H = 4.
models::TranslatorConfig tiny_config(const TinyData& d, int64_t layers, models::AttentionMode mode,
                                     models::Positions positions = models::Positions::Absolute) {
  models::TranslatorConfig c = qkv::testing::test_config({4, models::has_rotary(positions) ? 4 : 3, 6},
                                                         d.english.size(), d.hindi.size(), d.layout, mode, layers);
  c.positions = positions;
  return c;
}

constexpr models::Positions kEveryPositions[] = {models::Positions::Absolute, models::Positions::Rotary,
                                                 models::Positions::AbsoluteRotary, models::Positions::Alibi};

std::vector<std::string> names_of(const nn::Module& m) {
  std::vector<std::string> names;
  for (const auto& [name, t] : m.named_parameters()) names.push_back(name);
  return names;
}

bool bitwise_equal(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  const std::vector<double> x = a.to_vector(), y = b.to_vector();
  return std::memcmp(x.data(), y.data(), x.size() * sizeof(double)) == 0;
}

const std::vector<std::string> kOneLayerNames = {
    "src_embed.weight", "tgt_embed.weight", "pos_embed.weight", "attn.W_q.weight", "attn.W_k.weight",
    "attn.W_v.weight",  "attn.W_o.weight",  "ln1.weight",       "ln1.bias",        "ffn.fc1.weight",
    "ffn.fc1.bias",     "ffn.fc2.weight",   "ffn.fc2.bias",     "head.weight",     "head.bias"};

// fn(model, layers) for a float64 model (seed `seed`) of 1 and of 2 layers, learned and static,
// under every position scheme.
void for_each_float64_model(const TinyData& d, uint64_t seed,
                            const std::function<void(models::Translator&, int64_t)>& fn) {
  for (auto positions : kEveryPositions)
    for (int64_t layers : {1, 2})
      for (auto mode : {models::AttentionMode::Learned, models::AttentionMode::Static}) {
        CAPTURE(models::positions_name(positions));
        CAPTURE(layers);
        CAPTURE(models::attention_mode_name(mode));
        Generator gen(seed);
        models::Translator model(tiny_config(d, layers, mode, positions), gen);
        model.to(DType::F64);
        fn(model, layers);
      }
}

// Every parameter's gradient after `loss_fn()` runs backward from zeroed gradients (an empty
// entry for a parameter that got none); the loss's value goes to *value when asked.
std::vector<std::vector<double>> gradients_of(const std::vector<Tensor>& params, const std::function<Tensor()>& loss_fn,
                                              double* value = nullptr) {
  for (Tensor p : params) p.zero_grad();
  Tensor loss = loss_fn();
  if (value) *value = loss.item();
  loss.backward();
  std::vector<std::vector<double>> grads;
  for (const Tensor& p : params) grads.push_back(p.grad().defined() ? p.grad().to_vector() : std::vector<double>{});
  return grads;
}

// Two sets of float64 gradients agree to rounding (relative 1e-12).
void check_same_gradients(const std::vector<std::vector<double>>& a, const std::vector<std::vector<double>>& b) {
  REQUIRE(a.size() == b.size());
  for (size_t p = 0; p < a.size(); ++p) {
    CAPTURE(p);
    REQUIRE(a[p].size() == b[p].size());
    for (size_t i = 0; i < a[p].size(); ++i) CHECK(std::fabs(a[p][i] - b[p][i]) <= 1e-12 * (1.0 + std::fabs(b[p][i])));
  }
}

}  // namespace

TEST_SUITE("layers") {
TEST_CASE("a float64 gradient check of the whole two-layer model's loss (learned and static, every position scheme)") {
  const TinyData d;
  const data::Batch batch = d.batch();
  for (auto positions : kEveryPositions)
    for (auto mode : {models::AttentionMode::Learned, models::AttentionMode::Static}) {
      CAPTURE(models::positions_name(positions));
      CAPTURE(models::attention_mode_name(mode));
      Generator gen(7);
      models::Translator model(tiny_config(d, 2, mode, positions), gen);
      model.to(DType::F64);
      model.train(true);
      const auto params = model.named_parameters();
      const auto result = qkv::testing::gradcheck_parameters(params, [&] { return model.loss(batch); });
      CHECK_MESSAGE(result.ok, result.first_failure);
      CHECK(result.checked == model.parameter_count());  // layer 1's parameters included
    }
}

TEST_CASE("the last layer's skipped source rows change no logit, loss or gradient (1 and 2 layers)") {
  // Translator::forward runs the last layer's queries, W_o, LayerNorm and feed-forward over the
  // target positions only; the option keep_source_positions runs every position. In float64 the
  // two agree to rounding, and without the skip the source rows would be the only difference.
  const TinyData d;
  const data::Batch batch = d.batch();
  for_each_float64_model(d, 11, [&](models::Translator& model, int64_t) {
    const auto params = model.parameters();
    std::vector<double> logits_trim, logits_full;
    auto run = [&](bool keep, std::vector<double>& logits) {
      return gradients_of(params, [&] {
        Tensor out = model.forward(batch, {.keep_source_positions = keep});
        logits = out.to_vector();
        return cross_entropy(out, batch.target_output, data::Vocab::PAD);
      });
    };
    const auto grads_trim = run(false, logits_trim);
    const auto grads_full = run(true, logits_full);
    REQUIRE(logits_trim.size() == logits_full.size());
    for (size_t i = 0; i < logits_trim.size(); ++i)
      CHECK(logits_trim[i] == doctest::Approx(logits_full[i]).epsilon(1e-12));
    check_same_gradients(grads_trim, grads_full);
  });
}

TEST_CASE("the packed loss (padding skipped in every layer) equals the padded one, value and gradients") {
  // Translator::loss runs only the real positions when the batch knows its target lengths;
  // cross_entropy(forward(batch)) runs every position. TinyData pads both sides.
  const TinyData d;
  const data::Batch batch = d.batch();
  REQUIRE(batch.target_lengths == std::vector<int64_t>{4, 3, 4});
  REQUIRE(batch.source_lengths == std::vector<int64_t>{3, 2, 3});
  for_each_float64_model(d, 5, [&](models::Translator& model, int64_t) {
    const auto params = model.parameters();
    double packed = 0, padded = 0;
    const auto grads_packed = gradients_of(
        params, [&] { return model.loss(batch); }, &packed);
    const auto grads_padded = gradients_of(
        params, [&] { return cross_entropy(model.forward(batch), batch.target_output, data::Vocab::PAD); }, &padded);
    CHECK(packed == doctest::Approx(padded).epsilon(1e-12));
    check_same_gradients(grads_packed, grads_padded);
    // The packed path reads the lengths: one target position too few drops a counted token's
    // logit (it becomes the zero row), so the loss moves.
    data::Batch short_batch = batch;
    short_batch.target_lengths[1] -= 1;
    CHECK(model.loss(short_batch).item() != doctest::Approx(padded).epsilon(1e-9));
  });
}

TEST_CASE("label smoothing: the packed loss equals the padded one, value and gradients, and moves the loss") {
  const TinyData d;
  const data::Batch batch = d.batch();
  for_each_float64_model(d, 17, [&](models::Translator& model, int64_t) {
    const auto params = model.parameters();
    double packed = 0, padded = 0, plain = 0;
    const auto grads_packed = gradients_of(
        params, [&] { return model.loss(batch, {.label_smoothing = 0.1}); }, &packed);
    const auto grads_padded = gradients_of(
        params, [&] { return cross_entropy(model.forward(batch), batch.target_output, data::Vocab::PAD, 0.1); },
        &padded);
    CHECK(packed == doctest::Approx(padded).epsilon(1e-12));
    check_same_gradients(grads_packed, grads_padded);
    gradients_of(
        params, [&] { return model.loss(batch); }, &plain);
    CHECK(plain != doctest::Approx(packed).epsilon(1e-9));
  });
}

TEST_CASE("none: each position's own value, without an attention op, equals the composed identity weights") {
  // Translator::forward hands none's positions their own values (self-only, the last layer's
  // target rows only); recording the weights runs the composed path with the identity mask.
  // Logits, loss and gradients agree (float64, 1 and 2 layers), and a knockout takes the
  // composed path too.
  const TinyData d;
  const data::Batch batch = d.batch();
  for (int64_t layers : {1, 2}) {
    CAPTURE(layers);
    Generator gen(13);
    models::Translator model(tiny_config(d, layers, models::AttentionMode::None), gen);
    model.to(DType::F64);
    const auto params = model.parameters();
    std::vector<double> logits_self, logits_composed;
    auto run = [&](bool record, std::vector<double>& logits) {
      return gradients_of(params, [&] {
        Tensor out = model.forward(batch, {.record_attention = record});
        logits = out.to_vector();
        return cross_entropy(out, batch.target_output, data::Vocab::PAD);
      });
    };
    const auto grads_self = run(false, logits_self);
    CHECK_FALSE(model.last_attention(0).defined());  // no weights formed
    const auto grads_composed = run(true, logits_composed);
    CHECK(model.last_attention(layers - 1).defined());
    REQUIRE(logits_self.size() == logits_composed.size());
    for (size_t i = 0; i < logits_self.size(); ++i)
      CHECK(logits_self[i] == doctest::Approx(logits_composed[i]).epsilon(1e-12));
    check_same_gradients(grads_self, grads_composed);
    // the training loss takes the same path
    double value = 0;
    check_same_gradients(gradients_of(
                             params, [&] { return model.loss(batch); }, &value),
                         grads_self);
  }
}

TEST_CASE("the packed loss under a knockout equals the padded one, value and gradients") {
  // A knockout names padded positions, so its layer runs on (B, T, H) tensors rebuilt from the
  // rows while the other layers stay ragged: the first layer, then the last (its target queries).
  const TinyData d;
  const data::Batch batch = d.batch();
  const int64_t S = d.layout.max_source, T = d.layout.length();
  for_each_float64_model(d, 7, [&](models::Translator& model, int64_t layers) {
    for (int64_t layer : {int64_t{0}, layers - 1}) {
      CAPTURE(layer);
      const models::ForwardOptions options{.knockout = {.key = 1, .query_from = S, .query_to = T, .layer = layer}};
      const auto params = model.parameters();
      double packed = 0, padded = 0, plain = 0;
      const auto grads_packed = gradients_of(
          params, [&] { return model.loss(batch, options); }, &packed);
      const auto grads_padded = gradients_of(
          params, [&] { return cross_entropy(model.forward(batch, options), batch.target_output, data::Vocab::PAD); },
          &padded);
      CHECK(packed == doctest::Approx(padded).epsilon(1e-12));
      check_same_gradients(grads_packed, grads_padded);
      gradients_of(
          params, [&] { return model.loss(batch); }, &plain);
      CHECK(plain != doctest::Approx(packed).epsilon(1e-9));  // the knockout took effect
    }
  });
}

TEST_CASE("the packed loss names a batch whose lengths do not fit it") {
  const TinyData d;
  data::Batch batch = d.batch();
  Generator gen(5);
  models::Translator model(tiny_config(d, 1, models::AttentionMode::Learned), gen);
  batch.target_lengths[2] = 9;
  CHECK(error_of([&] { model.loss(batch); }).find("batch row 2 has 3 source and 9 target positions") !=
        std::string::npos);
}

TEST_CASE("the model gradient check fails when a layer-1 gradient is missing") {
  const TinyData d;
  const data::Batch batch = d.batch();
  Generator gen(7);
  models::Translator model(tiny_config(d, 2, models::AttentionMode::Learned), gen);
  model.to(DType::F64);
  Tensor w;
  for (const auto& [name, t] : model.named_parameters())
    if (name == "layers.1.ffn.fc1.weight") w = t;
  REQUIRE(w.defined());
  // sum(w^2) added through detach: the numeric derivative sees 2w, the analytic one nothing.
  auto broken = [&] { return add(model.loss(batch), sum(mul(w, w)).detach()); };
  const auto result = qkv::testing::gradcheck_parameters(model.named_parameters(), broken);
  CHECK_FALSE(result.ok);
  CHECK(result.first_failure.find("layers.1.ffn.fc1.weight") != std::string::npos);
}

TEST_CASE("a one-layer model keeps the original parameter names, in order") {
  const TinyData d;
  Generator gen(1);
  models::Translator model(tiny_config(d, 1, models::AttentionMode::Learned), gen);
  CHECK(names_of(model) == kOneLayerNames);
  CHECK(model.layers() == 1);
  const models::LoadedTranslator twin = models::load_translator("tests/fixtures/twin_model.safetensors");
  CHECK(twin.model->layers() == 1);
  CHECK(names_of(*twin.model) == kOneLayerNames);
}

TEST_CASE("a one-layer model draws its initial weights in the original order (pinned values)") {
  // Values of the code before --layers existed (embeddings, feed-forward, head, then attention),
  // for seed 1 and this config; any change to the draw order changes them, and with them every
  // same-seed checkpoint.
  const models::TranslatorConfig c = qkv::testing::test_config({4, 3, 6}, 11, 12, {3, 4});
  Generator gen(1);
  models::Translator model(c, gen);
  const std::map<std::string, std::pair<float, float>> pinned = {
      // first and last element
      {"pos_embed.weight", {-0.0459687524f, -0.509263635f}}, {"attn.W_q.weight", {-0.118479922f, 0.304749012f}},
      {"attn.W_o.weight", {0.353756368f, -0.116080955f}},    {"ffn.fc1.weight", {0.164375648f, -0.477400005f}},
      {"ffn.fc2.bias", {0.0641044974f, -0.186105669f}},      {"head.weight", {-0.0565124787f, -0.0229871292f}},
      {"head.bias", {0.0318228416f, -0.0210609939f}}};
  int seen = 0;
  for (const auto& [name, t] : model.named_parameters()) {
    auto it = pinned.find(name);
    if (it == pinned.end()) continue;
    CAPTURE(name);
    const std::vector<double> v = t.to_vector();
    CHECK(static_cast<float>(v.front()) == it->second.first);
    CHECK(static_cast<float>(v.back()) == it->second.second);
    ++seen;
  }
  CHECK(seen == static_cast<int>(pinned.size()));
}

TEST_CASE("layer l >= 1 is named layers.l.*; static mode has no attention parameters") {
  const TinyData d;
  Generator gen(1);
  models::Translator learned(tiny_config(d, 3, models::AttentionMode::Learned), gen);
  std::vector<std::string> want(kOneLayerNames.begin(), kOneLayerNames.end() - 2);  // all but head.*
  for (int l : {1, 2})
    for (const char* n : {"attn.W_q.weight", "attn.W_k.weight", "attn.W_v.weight", "attn.W_o.weight", "ln1.weight",
                          "ln1.bias", "ffn.fc1.weight", "ffn.fc1.bias", "ffn.fc2.weight", "ffn.fc2.bias"})
      want.push_back(fmt::format("layers.{}.{}", l, n));
  want.push_back("head.weight");
  want.push_back("head.bias");
  CHECK(names_of(learned) == want);
  CHECK(learned.attention_parameter_count() == 3 * 4 * 4 * 3);

  models::Translator fixed(tiny_config(d, 2, models::AttentionMode::Static), gen);
  const std::vector<std::string> want_static = {"src_embed.weight",
                                                "tgt_embed.weight",
                                                "pos_embed.weight",
                                                "ln1.weight",
                                                "ln1.bias",
                                                "ffn.fc1.weight",
                                                "ffn.fc1.bias",
                                                "ffn.fc2.weight",
                                                "ffn.fc2.bias",
                                                "layers.1.ln1.weight",
                                                "layers.1.ln1.bias",
                                                "layers.1.ffn.fc1.weight",
                                                "layers.1.ffn.fc1.bias",
                                                "layers.1.ffn.fc2.weight",
                                                "layers.1.ffn.fc2.bias",
                                                "head.weight",
                                                "head.bias"};
  CHECK(names_of(fixed) == want_static);
  CHECK(fixed.attention_parameter_count() == 0);
}

TEST_CASE("extra layers draw after everything a one-layer model draws, so the shared part is identical") {
  const TinyData d;
  Generator g1(5), g2(5);
  models::Translator one(tiny_config(d, 1, models::AttentionMode::Learned), g1);
  models::Translator two(tiny_config(d, 2, models::AttentionMode::Learned), g2);
  const auto a = one.named_parameters(), b = two.named_parameters();
  for (const auto& [name, t] : a) {
    CAPTURE(name);
    bool found = false;
    for (const auto& [other, u] : b)
      if (other == name) {
        found = true;
        CHECK(bitwise_equal(t, u));
      }
    CHECK(found);
  }
  // layer 1 has weights of its own, not a copy of layer 0's
  Tensor w0, w1;
  for (const auto& [name, t] : b) {
    if (name == "attn.W_q.weight") w0 = t;
    if (name == "layers.1.attn.W_q.weight") w1 = t;
  }
  REQUIRE(w1.defined());
  CHECK_FALSE(bitwise_equal(w0, w1));

  // The first layer's attention and contextual vectors therefore agree between the two models.
  const data::Batch batch = d.batch();
  NoGradGuard no_grad;
  one.train(false);
  two.train(false);
  one.forward(batch, {.record_attention = true});
  two.forward(batch, {.record_attention = true});
  CHECK(bitwise_equal(one.last_attention(0), two.last_attention(0)));
  CHECK_FALSE(bitwise_equal(two.last_attention(0), two.last_attention(1)));
}

TEST_CASE("config: 'layers' is written only when not 1, read as 1 when missing, and checked") {
  const TinyData d;
  models::TranslatorConfig c = tiny_config(d, 1, models::AttentionMode::Learned);
  CHECK(c.to_json().find("layers") == std::string::npos);  // one-layer checkpoints stay byte-identical
  CHECK(models::TranslatorConfig::from_json(c.to_json()).layers == 1);
  c.layers = 2;
  CHECK(c.to_json().find("\"layers\":2") != std::string::npos);
  CHECK(models::TranslatorConfig::from_json(c.to_json()).layers == 2);
  for (int64_t bad : {0, 17, -1}) {
    c.layers = bad;
    CHECK(error_of([&] { c.validate(); }) == fmt::format("model config: layers must be in [1, 16], got {}", bad));
    Generator gen(1);
    CHECK(error_of([&] { models::Translator m(c, gen); }).find("layers must be in [1, 16]") != std::string::npos);
  }
  c.layers = 2;
  std::string json = c.to_json();
  json.replace(json.find("\"layers\":2"), 10, "\"layers\":\"two\"");
  CHECK(error_of([&] { models::TranslatorConfig::from_json(json); }) ==
        "model config: 'layers' is missing or not an integer");
}

TEST_CASE("every layer's attention is kept; out-of-range layers are rejected; traces pick a layer") {
  const TinyData d;
  Generator gen(2);
  models::Translator model(tiny_config(d, 2, models::AttentionMode::Learned), gen);
  model.train(false);
  const data::Batch batch = d.batch();
  {
    NoGradGuard no_grad;
    model.forward(batch);  // the fused path keeps no weights
    for (int64_t l = 0; l < 2; ++l) CHECK_FALSE(model.last_attention(l).defined());
    model.forward(batch, {.record_attention = true});
  }
  const int64_t T = d.layout.length();
  for (int64_t l = 0; l < 2; ++l) {
    CAPTURE(l);
    const Tensor& w = model.last_attention(l);
    REQUIRE(w.defined());
    CHECK(w.shape() == std::vector<int64_t>{3, T, T});
    const std::vector<double> v = w.to_vector();
    for (int64_t row = 0; row < 3 * T; ++row) {
      double s = 0;
      for (int64_t j = 0; j < T; ++j) s += v[row * T + j];
      CHECK(std::fabs(s - 1.0) < 1e-5);
    }
  }
  CHECK(model.last_attention().same_impl(model.last_attention(1)));  // the last layer
  CHECK(error_of([&] { model.last_attention(2); }) ==
        "attention layer 2 is out of range: this model has 2 layers (0 to 1)");
  CHECK(error_of([&] { model.last_attention(-1); }).find("out of range") != std::string::npos);

  const std::vector<std::string> english = {"money", "bank", "grows"};
  for (int64_t l = 0; l < 2; ++l) {
    const models::AttentionTrace trace = models::trace_attention(model, english, d.english, d.hindi, l);
    CHECK(trace.layer == l);
    CHECK(trace.layers == 2);
    // the traced cells are the chosen layer's weights (row 0, the first English word)
    const std::vector<double> full = model.last_attention(l).to_vector();
    for (size_t j = 0; j < english.size(); ++j) CHECK(trace.weights[j] == full[j]);
  }
  const auto t0 = models::trace_attention(model, english, d.english, d.hindi, 0);
  const auto t1 = models::trace_attention(model, english, d.english, d.hindi, 1);
  CHECK(t0.weights != t1.weights);
  CHECK(error_of([&] { models::trace_attention(model, english, d.english, d.hindi, 2); }).find("out of range") !=
        std::string::npos);
}

// issue 26: the checksum (or, for a flip in its own key, the unknown key left behind) refuses
// every single-bit flip of a checkpoint; padding is the only place one could hide, and a
// flipped space is no longer JSON whitespace.
TEST_CASE("a checkpoint with any one of 1,000 random bits flipped is refused") {
  const TinyData d;
  Generator gen(3);
  models::Translator model(tiny_config(d, 2, models::AttentionMode::Learned), gen);
  const std::string path =
      (std::filesystem::temp_directory_path() / fmt::format("qkv_flips_{}.safetensors", ::getpid())).string();
  models::save_translator(path, model, d.english, d.hindi);
  std::ifstream in(path, std::ios::binary);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::remove(path.c_str());
  CHECK_NOTHROW(models::load_translator(safetensors_parse(bytes, "ckpt"), "ckpt"));
  std::mt19937_64 pick(26);
  int refused = 0, corrupted = 0;
  for (int trial = 0; trial < 1000; ++trial) {
    std::vector<uint8_t> flipped = bytes;
    const size_t bit = pick() % (flipped.size() * 8);
    flipped[bit / 8] ^= static_cast<uint8_t>(1u << (bit % 8));
    const std::string error = error_of([&] { models::load_translator(safetensors_parse(flipped, "ckpt"), "ckpt"); });
    refused += !error.empty();
    corrupted += error.find("corrupted") != std::string::npos;
  }
  CHECK(refused == 1000);
  MESSAGE("bit flips of a " << bytes.size() << "-byte checkpoint: " << refused << " of 1000 refused, " << corrupted
                            << " by the checksum");
}

TEST_CASE("a two-layer checkpoint round trips: config, every parameter bit for bit, the same outputs") {
  const TinyData d;
  Generator gen(3);
  models::Translator model(tiny_config(d, 2, models::AttentionMode::Learned), gen);
  model.train(false);
  const std::string path =
      (std::filesystem::temp_directory_path() / fmt::format("qkv_layers_{}.safetensors", ::getpid())).string();
  models::save_translator(path, model, d.english, d.hindi);
  const std::map<std::string, std::string> meta = read_checkpoint_metadata(path);
  CHECK(meta.at("config").find("\"layers\":2") != std::string::npos);
  models::LoadedTranslator loaded = models::load_translator(path);
  std::remove(path.c_str());
  CHECK(loaded.model->layers() == 2);
  CHECK(loaded.model->config().to_json() == model.config().to_json());
  const auto want = model.named_parameters(), got = loaded.model->named_parameters();
  REQUIRE(want.size() == got.size());
  for (size_t k = 0; k < want.size(); ++k) {
    CAPTURE(want[k].first);
    CHECK(want[k].first == got[k].first);
    CHECK(bitwise_equal(want[k].second, got[k].second));
  }
  const data::Batch batch = d.batch();
  NoGradGuard no_grad;
  CHECK(bitwise_equal(model.forward(batch), loaded.model->forward(batch)));
  CHECK(bitwise_equal(model.forward(batch, {.record_attention = true}),
                      loaded.model->forward(batch, {.record_attention = true})));
  CHECK(bitwise_equal(model.last_attention(1), loaded.model->last_attention(1)));
  CHECK(model.translate({{"money", "bank", "grows"}}, d.english, d.hindi) ==
        loaded.model->translate({{"money", "bank", "grows"}}, loaded.english, loaded.hindi));

  // A one-layer model cannot load a two-layer checkpoint's weights: the extra tensors are named.
  models::save_translator(path, model, d.english, d.hindi);
  Generator gen1(3);
  models::Translator one(tiny_config(d, 1, models::AttentionMode::Learned), gen1);
  CHECK(error_of([&] { load_checkpoint(path, one); }).find("'layers.1.") != std::string::npos);
  std::remove(path.c_str());
}
}

TEST_CASE("a float64 checkpoint loads, translates and evaluates in float64, bit for bit") {
  const TinyData d;
  Generator gen(5);
  models::Translator model(tiny_config(d, 2, models::AttentionMode::Learned), gen);
  model.to(DType::F64);
  model.train(false);
  const std::string path =
      (std::filesystem::temp_directory_path() / fmt::format("qkv_float64_{}.safetensors", ::getpid())).string();
  models::save_translator(path, model, d.english, d.hindi);
  models::LoadedTranslator loaded = models::load_translator(path);
  std::remove(path.c_str());
  for (const auto& [name, p] : loaded.model->named_parameters()) {
    CAPTURE(name);
    CHECK(p.dtype() == DType::F64);
  }
  const data::Batch batch = d.batch();
  NoGradGuard no_grad;
  CHECK(bitwise_equal(model.forward(batch), loaded.model->forward(batch)));
}
