// tests/program/test_pytorch_twin.cpp — the reference test against PyTorch, as llm.c does it: the
// translator in tests/fixtures/twin_model.safetensors is rebuilt out of torch.nn modules by
// tools/pytorch_twin.py, which runs one fixed batch in float64 and stores the loss, the logits,
// the attention weights, every parameter's gradient and the batch itself in
// tests/fixtures/twin_reference.safetensors. Here qkv runs the same batch and must agree.
//
// Tolerances (b = PyTorch float64 reference, a = qkv):
//  * float64: every element within |a - b| <= 1e-6 * max(|b|, 1e-6 * max|B|), where max|B| is the
//    largest magnitude in that reference tensor. Elementwise relative, with a floor one millionth
//    of the tensor's scale so that entries that cancel to almost zero (an absolute error of
//    ~1e-16 on them is rounding, not a bug) do not need impossible relative agreement.
//  * float32 (qkv in float32 against the same float64 reference; no float32 fixture is needed):
//    every element within |a - b| <= 1e-4 * max|B| (relative to the tensor's largest magnitude).
//
// The training trajectory: the fixture also holds the first 10 losses (and gradient norms) of
// AdamW training from the same weights with qkv's warm-up + cosine schedule and clipping to norm
// 1.0, computed by PyTorch in float64 and in float32. qkv runs models::train_step over the same
// batches; each step's loss must agree within 1e-9 relative in float64 and 1e-4 in float32.
//
// Paths are relative to the repository root (where `make test` runs); QKV_TWIN_MODEL and
// QKV_TWIN_REFERENCE override them, e.g. to check a static or none model made the same way;
// QKV_TWIN_VERBOSE=1 prints each tensor's largest error.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "framework/autograd.h"
#include "framework/optim.h"
#include "framework/safetensors.h"
#include "models/train_step.h"
#include "models/translator_io.h"

using namespace qkv;

namespace {

std::string fixture_path(const char* env, const char* fallback) {
  const char* value = std::getenv(env);
  return value && *value ? value : fallback;
}

// QKV_TWIN_VERBOSE=1 prints the largest error of every compared tensor.
bool verbose() {
  const char* value = std::getenv("QKV_TWIN_VERBOSE");
  return value && std::string(value) == "1";
}

// The fixture pair in use: "" is the shipped default (ReLU feed-forward), "_gelu" the GELU variant,
// "_layers2" a two-layer model (layers.1.*, each layer's attention).
std::string g_variant;
std::string model_path() {
  return g_variant.empty() ? fixture_path("QKV_TWIN_MODEL", "tests/fixtures/twin_model.safetensors")
                           : "tests/fixtures/twin" + g_variant + "_model.safetensors";
}
std::string reference_path() {
  return g_variant.empty() ? fixture_path("QKV_TWIN_REFERENCE", "tests/fixtures/twin_reference.safetensors")
                           : "tests/fixtures/twin" + g_variant + "_reference.safetensors";
}

// The reference file, with typed access to its tensors.
struct Reference {
  SafeTensorsFile file;
  std::string path;

  const SafeTensor& get(const std::string& name) const {
    auto it = file.tensors.find(name);
    if (it == file.tensors.end()) throw std::runtime_error(fmt::format("{}: no tensor '{}'", path, name));
    return it->second;
  }
  // The values of tensor `name`, stored as `dtype` ("F64" or "I64").
  template <class T>
  std::vector<T> values(const std::string& name, const char* dtype) const {
    const SafeTensor& t = get(name);
    if (t.dtype != dtype)
      throw std::runtime_error(fmt::format("{}: '{}' is {}, expected {}", path, name, t.dtype, dtype));
    std::vector<T> out(t.data.size() / sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), t.data.data(), t.data.size());
    return out;
  }
  std::vector<double> f64(const std::string& name) const { return values<double>(name, "F64"); }
  std::vector<int64_t> i64(const std::string& name) const { return values<int64_t>(name, "I64"); }
  Shape shape(const std::string& name) const {
    const auto& s = get(name).shape;
    return Shape(s.begin(), s.end());
  }
  std::string meta(const std::string& key) const {
    auto it = file.metadata.find(key);
    return it == file.metadata.end() ? std::string() : it->second;
  }
};

// Reads both fixtures, or FAILs (aborting the test case) with how to make them.
Reference load_reference() {
  const std::string model = model_path(), ref = reference_path();
  for (const std::string& p : {model, ref})
    if (!std::filesystem::exists(p))
      FAIL(
          fmt::format("missing fixture '{}' (run the tests from the repository root; regenerate with "
                      "/usr/bin/python3 tools/pytorch_twin.py --checkpoint {} --out {})",
                      p, model, ref));
  Reference r{safetensors_read(ref), ref};
  REQUIRE_MESSAGE(r.meta("format") == "qkv-pytorch-twin-1", ref, " is not a pytorch_twin fixture");
  REQUIRE_MESSAGE(r.meta("dtype") == "float64", ref, " was not computed in float64");
  return r;
}

data::Batch batch_from(const Reference& ref) {
  data::Batch batch;
  batch.source = Tensor::from_ids(ref.i64("batch.source"), ref.shape("batch.source"));
  batch.target_input = Tensor::from_ids(ref.i64("batch.target_input"), ref.shape("batch.target_input"));
  batch.target_output = Tensor::from_ids(ref.i64("batch.target_output"), ref.shape("batch.target_output"));
  batch.source_lengths = ref.i64("batch.source_lengths");
  return batch;
}

struct Agreement {
  double worst = 0;    // the largest |a - b| / allowed-scale seen, in units of the tolerance
  double max_rel = 0;  // the largest |a - b| / max(|b|, floor)
  std::string first_failure;
};

// float64: |a - b| <= tol * max(|b|, floor_fraction * max|b|) element by element.
// float32: floor_fraction = 1, i.e. |a - b| <= tol * max|b|.
Agreement compare(const std::vector<double>& got, const std::vector<double>& want, double tol, double floor_fraction) {
  Agreement a;
  if (got.size() != want.size()) {
    a.first_failure = fmt::format("{} values, the reference has {}", got.size(), want.size());
    a.worst = INFINITY;
    return a;
  }
  double max_abs = 0;
  for (double w : want) max_abs = std::max(max_abs, std::fabs(w));
  const double floor = std::max(floor_fraction * max_abs, 1e-300);
  for (size_t i = 0; i < want.size(); ++i) {
    const double scale = std::max(std::fabs(want[i]), floor);
    const double rel = std::fabs(got[i] - want[i]) / scale;
    if (!(rel <= tol) && a.first_failure.empty())  // NaN fails too
      a.first_failure =
          fmt::format("element {}: qkv {:.17g} vs PyTorch {:.17g} (relative error {:.3g})", i, got[i], want[i], rel);
    if (std::isnan(rel)) a.max_rel = INFINITY;
    a.max_rel = std::max(a.max_rel, rel);
  }
  a.worst = a.max_rel / tol;
  return a;
}

// Runs qkv on the fixture's batch in `dtype` and checks everything against the reference.
// Returns the largest relative error seen (for the message).
double check_against_reference(DType dtype, double tol, double floor_fraction) {
  const Reference ref = load_reference();
  models::LoadedTranslator loaded = models::load_translator(model_path());
  models::Translator& model = *loaded.model;
  CHECK_MESSAGE(model.config().to_json() == ref.meta("config"),
                "the reference was made from another checkpoint: regenerate it with tools/pytorch_twin.py");
  if (dtype != DType::F32) model.to(dtype);
  // A model with randomized positions draws them afresh in training; the twin is that model outside
  // training (its positions spread position_stride() apart), so it is checked there.
  model.train(model.config().random_positions == 0);

  const data::Batch batch = batch_from(ref);
  double max_rel = 0;
  auto expect_close = [&](const std::string& what, const Tensor& got, const std::string& ref_name) {
    CAPTURE(what);
    REQUIRE(got.defined());
    CHECK(got.dtype() == dtype);
    CHECK_MESSAGE(got.shape() == ref.shape(ref_name), shape_str(got.shape()), " vs ", shape_str(ref.shape(ref_name)));
    const Agreement a = compare(got.to_vector(), ref.f64(ref_name), tol, floor_fraction);
    if (verbose()) MESSAGE(fmt::format("{:<22} {} max relative error {:.3g}", what, dtype_name(dtype), a.max_rel));
    INFO(a.first_failure);
    CHECK(a.first_failure.empty());
    max_rel = std::max(max_rel, a.max_rel);
  };

  // The training path: Translator::loss through the fused attention op, then backward into every
  // parameter.
  model.zero_grad();
  Tensor loss = model.loss(batch);
  expect_close("loss", loss, "loss");
  loss.backward();
  {
    NoGradGuard no_grad;
    expect_close("logits", model.forward(batch), "logits");
    // The composed path, which keeps the weights (what `qkv attend` draws), gives the same.
    expect_close("logits (composed attention)", model.forward(batch, {.record_attention = true}), "logits");
    expect_close("attention", model.last_attention(), "attention");
    // A several-layer fixture also holds each layer's weights as attention.L.
    if (model.layers() > 1)
      for (int64_t l = 0; l < model.layers(); ++l)
        expect_close(fmt::format("attention of layer {}", l), model.last_attention(l), fmt::format("attention.{}", l));
  }

  // Exactly the same parameters on both sides, each with a matching gradient.
  std::set<std::string> theirs;
  for (const auto& [name, tensor] : ref.file.tensors)
    if (name.rfind("grad.", 0) == 0) theirs.insert(name.substr(5));
  std::set<std::string> ours;
  for (const auto& [name, param] : model.named_parameters()) {
    ours.insert(name);
    if (!theirs.count(name)) {
      FAIL_CHECK("qkv parameter '", name, "' has no PyTorch gradient in the reference");
      continue;
    }
    expect_close("grad " + name, param.grad(), "grad." + name);
  }
  for (const auto& name : theirs)
    if (!ours.count(name)) FAIL_CHECK("PyTorch parameter '", name, "' does not exist in qkv");
  return max_rel;
}

// Each step's loss (before its update), gradient norm (before clipping) and learning rate.
struct Trajectory {
  std::vector<double> losses, grad_norms, lrs;
};

// Trains the fixture model in `dtype` over the reference's "train.*" batches with
// models::train_step, the reference's settings and qkv's learning-rate schedule.
Trajectory train_trajectory(const Reference& ref, DType dtype) {
  const nlohmann::json settings = nlohmann::json::parse(ref.meta("train"));
  models::LoadedTranslator loaded = models::load_translator(model_path());
  models::Translator& model = *loaded.model;
  if (dtype != DType::F32) model.to(dtype);
  // A model with randomized positions draws them afresh in training; the twin is that model outside
  // training (its positions spread position_stride() apart), so it is checked there.
  model.train(model.config().random_positions == 0);
  const std::vector<Tensor> params = model.parameters();
  optim::AdamW optimizer(params, {.lr = settings.at("lr").get<double>(),
                                  .beta1 = settings.at("beta1").get<double>(),
                                  .beta2 = settings.at("beta2").get<double>(),
                                  .eps = settings.at("eps").get<double>(),
                                  .weight_decay = settings.at("weight_decay").get<double>()});
  const Shape source_shape = ref.shape("train.source"), target_shape = ref.shape("train.target_input");
  REQUIRE(source_shape.size() == 3);
  REQUIRE(target_shape.size() == 3);
  const int64_t steps = source_shape[0], B = source_shape[1];
  REQUIRE(steps == settings.at("steps").get<int64_t>());
  const std::vector<int64_t> source = ref.i64("train.source"), target_input = ref.i64("train.target_input"),
                             target_output = ref.i64("train.target_output"), lengths = ref.i64("train.source_lengths");
  const auto rows = [&](const std::vector<int64_t>& all, int64_t k, int64_t width) {
    return std::vector<int64_t>(all.begin() + k * B * width, all.begin() + (k + 1) * B * width);
  };
  const std::string schedule_name = settings.at("schedule").get<std::string>();
  REQUIRE_MESSAGE((schedule_name == "cosine" || schedule_name == "constant"), "schedule ", schedule_name);
  const optim::Schedule schedule = schedule_name == "cosine" ? optim::Schedule::Cosine : optim::Schedule::Constant;
  Trajectory t;
  for (int64_t k = 0; k < steps; ++k) {
    data::Batch batch;
    batch.source = Tensor::from_ids(rows(source, k, source_shape[2]), {B, source_shape[2]});
    batch.target_input = Tensor::from_ids(rows(target_input, k, target_shape[2]), {B, target_shape[2]});
    batch.target_output = Tensor::from_ids(rows(target_output, k, target_shape[2]), {B, target_shape[2]});
    batch.source_lengths = rows(lengths, k, 1);
    const double lr = optim::scheduled_learning_rate(k, settings.at("total_steps").get<int64_t>(),
                                                     settings.at("warmup_steps").get<int64_t>(),
                                                     settings.at("lr").get<double>(), schedule);
    models::StepOptions options;
    options.lr = lr;
    options.clip = settings.at("clip").get<double>();
    const models::StepResult r = models::train_step(model, optimizer, params, batch, options);
    t.losses.push_back(r.loss.item());
    t.grad_norms.push_back(r.grad_norm.item());
    t.lrs.push_back(lr);
  }
  return t;
}

// The trajectory in `dtype` against the reference's (suffix "" float64, "_float32" float32):
// losses and gradient norms each within `tol` relative. Returns the largest relative loss error.
double check_trajectory(DType dtype, double tol) {
  const Reference ref = load_reference();
  const std::string suffix = dtype == DType::F64 ? "" : "_float32";
  const Trajectory t = train_trajectory(ref, dtype);
  // the schedule itself, step by step (both sides evaluate the same expression in double)
  const Agreement lr = compare(t.lrs, ref.f64("train.lr"), 1e-15, 0);
  INFO("learning rate: ", lr.first_failure);
  CHECK(lr.first_failure.empty());
  const Agreement loss = compare(t.losses, ref.f64("train.losses" + suffix), tol, 0);
  INFO("loss: ", loss.first_failure);
  CHECK(loss.first_failure.empty());
  const Agreement norm = compare(t.grad_norms, ref.f64("train.grad_norms" + suffix), tol, 0);
  INFO("gradient norm: ", norm.first_failure);
  CHECK(norm.first_failure.empty());
  if (verbose()) {
    double max_abs = 0;
    for (size_t k = 0; k < t.losses.size() && k < ref.f64("train.losses" + suffix).size(); ++k)
      max_abs = std::max(max_abs, std::fabs(t.losses[k] - ref.f64("train.losses" + suffix)[k]));
    MESSAGE(
        fmt::format("{} {} training steps: loss largest relative error {:.3g} (absolute {:.3g}), gradient norm "
                    "largest relative error {:.3g}",
                    reference_path(), dtype_name(dtype), loss.max_rel, max_abs, norm.max_rel));
  }
  return loss.max_rel;
}

}  // namespace

// The fixture pair of `variant` (a two-layer model with `positions`) against PyTorch: float64 to
// 1e-6, float32 to 1e-4 of each tensor's scale.
static void check_variant(const char* variant, models::Positions positions) {
  g_variant = variant;
  {
    const models::LoadedTranslator loaded = models::load_translator(model_path());
    REQUIRE(loaded.model->layers() == 2);
    REQUIRE(loaded.model->config().positions == positions);
  }
  check_against_reference(DType::F64, 1e-6, 1e-6);
  check_against_reference(DType::F32, 1e-4, 1.0);
  g_variant = "";
}

TEST_SUITE("pytorch_twin") {
TEST_CASE("pytorch_twin: the fixture batch is what data::make_batch builds from the same sentences") {
  const Reference ref = load_reference();
  const models::LoadedTranslator loaded = models::load_translator(model_path());
  const auto english = nlohmann::json::parse(ref.meta("english")).get<std::vector<std::string>>();
  const auto hindi = nlohmann::json::parse(ref.meta("hindi")).get<std::vector<std::string>>();
  REQUIRE(english.size() == hindi.size());
  REQUIRE(!english.empty());
  std::vector<data::SentencePair> pairs;
  std::vector<size_t> indices;
  for (size_t i = 0; i < english.size(); ++i) {
    pairs.push_back({data::tokenize(english[i]), data::tokenize(hindi[i]), fmt::format("fixture:{}", i + 1)});
    indices.push_back(i);
  }
  const data::Batch ours =
      data::make_batch(pairs, indices, loaded.english, loaded.hindi, loaded.model->config().layout);
  const data::Batch theirs = batch_from(ref);
  CHECK(ours.source.to_ids() == theirs.source.to_ids());
  CHECK(ours.target_input.to_ids() == theirs.target_input.to_ids());
  CHECK(ours.target_output.to_ids() == theirs.target_output.to_ids());
  CHECK(ours.source_lengths == theirs.source_lengths);
  CHECK(ours.source.shape() == theirs.source.shape());
  CHECK(ours.target_input.shape() == theirs.target_input.shape());
  // The batch should exercise padding on both sides and every special token.
  const auto src = theirs.source.to_ids(), tout = theirs.target_output.to_ids();
  CHECK(std::count(src.begin(), src.end(), data::Vocab::PAD) > 0);
  CHECK(std::count(tout.begin(), tout.end(), data::Vocab::PAD) > 0);
  CHECK(std::count(tout.begin(), tout.end(), data::Vocab::EOS) == static_cast<long>(english.size()));
}

TEST_CASE("pytorch_twin: float64 loss, logits, attention and every gradient match PyTorch to 1e-6") {
  g_variant = "";
  const double max_rel = check_against_reference(DType::F64, 1e-6, 1e-6);
  if (verbose()) MESSAGE(fmt::format("float64: largest relative error {:.3g}", max_rel));
}

TEST_CASE("pytorch_twin: float32 agrees with the float64 PyTorch reference to 1e-4 of each tensor's scale") {
  g_variant = "";
  const double max_rel = check_against_reference(DType::F32, 1e-4, 1.0);
  if (verbose()) MESSAGE(fmt::format("float32: largest error relative to the tensor's max magnitude {:.3g}", max_rel));
}

TEST_CASE("pytorch_twin: a GELU feed-forward matches PyTorch too (float64 1e-6, float32 1e-4)") {
  g_variant = "_gelu";
  check_against_reference(DType::F64, 1e-6, 1e-6);
  check_against_reference(DType::F32, 1e-4, 1.0);
  g_variant = "";
}

TEST_CASE("pytorch_twin: a two-layer model matches PyTorch too, every layer's attention included") {
  check_variant("_layers2", models::Positions::Absolute);
}

TEST_CASE("pytorch_twin: a two-layer rotary model matches PyTorch too (RoPE on q and k, no position embedding)") {
  check_variant("_rotary", models::Positions::Rotary);
}

TEST_CASE("pytorch_twin: a two-layer alibi model matches PyTorch too (a distance bias on every score)") {
  check_variant("_alibi", models::Positions::Alibi);
}

TEST_CASE("pytorch_twin: a rotary model with --random-positions 64 matches PyTorch outside training (stride 2)") {
  {
    g_variant = "_random";
    const models::LoadedTranslator loaded = models::load_translator(model_path());
    REQUIRE(loaded.model->config().random_positions == 64);
    REQUIRE(loaded.model->config().position_stride() == 2);
  }
  check_variant("_random", models::Positions::Rotary);
}

TEST_CASE("pytorch_twin: 10 steps of train_step (AdamW, warm-up + cosine, clipping) follow PyTorch's losses") {
  for (const char* variant : {"", "_gelu", "_layers2"}) {
    g_variant = variant;
    CAPTURE(g_variant);
    check_trajectory(DType::F64, 1e-9);
    check_trajectory(DType::F32, 1e-4);
  }
  g_variant = "";
}
}
