// tests/program/test_host_reads.cpp — a training step (forward, loss, backward, clip, AdamW) never reads
// a tensor back to the host, so on a GPU it never waits for the device; only the logged loss does.
// And after the first steps it takes no new tensor memory from the system (the block cache).
#include <doctest/doctest.h>

#include <cmath>

#include "data/dataset.h"
#include "framework/backend.h"
#include "framework/ops.h"
#include "framework/optim.h"
#include "models/train_step.h"
#include "models/translator_io.h"

using namespace qkv;

namespace {
// The twin fixture in training mode, a two-sentence batch and AdamW: one training step's setting.
struct StepSetup {
  models::LoadedTranslator m = models::load_translator("tests/fixtures/twin_model.safetensors");
  data::SentencePair pair{data::tokenize("she ate a piece of cake"), data::tokenize("उसने केक का टुकड़ा खाया"), "test"};
  data::Batch batch = data::make_batch({pair, pair}, {0, 1}, m.english, m.hindi, m.model->config().layout);
  optim::AdamW optimizer{m.model->parameters(), {.lr = 1e-3, .weight_decay = 0.01}};
  std::vector<Tensor> params = m.model->parameters();
  StepSetup() { m.model->train(true); }
  Tensor step() { return models::train_step(*m.model, optimizer, params, batch).loss; }
};
}  // namespace

TEST_SUITE("host reads") {
TEST_CASE("a translator training step reads nothing back; reading the loss counts once") {
  StepSetup setup;
  const int64_t before = host_reads();
  Tensor loss;
  for (int step = 0; step < 2; ++step) loss = setup.step();
  CHECK(host_reads() == before);
  CHECK(std::isfinite(loss.item()));
  CHECK(host_reads() == before + 1);
}

TEST_CASE("cross_entropy and embedding read nothing back, with or without ignored targets") {
  const Tensor logits = Tensor::from_vector({0.5, -1, 2, 0, 1, 1}, {2, 3});
  const Tensor table = Tensor::from_vector({1, 2, 3, 4}, {2, 2});
  const int64_t before = host_reads();
  Tensor a = cross_entropy(logits, Tensor::from_ids({2, -100}, {2}));
  Tensor b = embedding(table, Tensor::from_ids({1, 0, 1}, {3}));
  CHECK(host_reads() == before);
  CHECK(a.item() == doctest::Approx(0.2414).epsilon(1e-3));  // -log_softmax([0.5, -1, 2])[2]
  CHECK(b.to_vector() == std::vector<double>{3, 4, 1, 2, 3, 4});
  CHECK(host_reads() == before + 2);
}

TEST_CASE("a training step takes no new tensor memory from the system once warm") {
  StepSetup setup;
  for (int step = 0; step < 2; ++step) setup.step();  // warm-up
  const MemoryUse warm = cpu_memory_use();
  for (int step = 0; step < 3; ++step) setup.step();
  const MemoryUse after = cpu_memory_use();
  CHECK(after.system_allocations == warm.system_allocations);
  CHECK(after.current == warm.current);  // nothing kept alive from step to step
}

TEST_CASE("at the benchmark's toy size, no step after the second takes tensor memory from the system") {
  // qkv bench's toy size (B = 64, 6 + 15 positions, D = 64, F = 256), with one and with two
  // blocks: the working set's blocks come in many sizes, and a released block of one size must
  // not be given back only to be asked for again within the same step. The first two steps differ
  // from the rest (the first makes the gradients and AdamW's moments, the second the first to
  // replace gradients), so, after blocks cached by the tests before, the second may still take a
  // few blocks (3 with two blocks since the packed projections); none after it may.
  for (const int64_t layers : {int64_t{1}, int64_t{2}}) {
    CAPTURE(layers);
    models::TranslatorConfig config;
    config.d_model = 64;
    config.d_k = 64;
    config.d_ff = 256;
    config.layers = layers;
    config.source_vocab = config.target_vocab = 600;
    config.layout = {6, 15};
    Generator gen(0);
    models::Translator model(config, gen);
    optim::AdamW optimizer(model.parameters(), {.lr = 1e-3, .weight_decay = 0.01});
    const std::vector<Tensor> params = model.parameters();
    const int64_t B = 64;
    auto ids = [&](int64_t count) {
      std::vector<int64_t> out;
      for (int64_t i = 0; i < count; ++i) out.push_back(4 + static_cast<int64_t>(gen.below(config.source_vocab - 4)));
      return out;
    };
    data::Batch batch;
    batch.source = Tensor::from_ids(ids(B * 6), {B, 6});
    const std::vector<int64_t> target = ids(B * 15);
    batch.target_input = Tensor::from_ids(target, {B, 15});
    batch.target_output = Tensor::from_ids(target, {B, 15});
    batch.source_lengths.assign(B, 6);
    models::train_step(model, optimizer, params, batch);  // the first step
    const int64_t after_first = cpu_memory_use().system_allocations;
    models::train_step(model, optimizer, params, batch);  // the second: a few blocks at most
    const MemoryUse first = cpu_memory_use();
    CHECK(first.system_allocations - after_first <= 4);
    for (int step = 0; step < 4; ++step) models::train_step(model, optimizer, params, batch);
    CHECK(cpu_memory_use().system_allocations == first.system_allocations);
  }
}
}
