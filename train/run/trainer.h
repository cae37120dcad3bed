// train/run/trainer.h — training and evaluation of the translator, shared by `qkv train`,
// `qkv eval` and `qkv demo`. Progress goes to stdout; files are written atomically.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "models/translator.h"
#include "train/run/train_options.h"

namespace qkv::app {

// TrainOptions, the options of a run, is made from the option table in train_options.h.

// Thrown when a run is interrupted (SIGINT, SIGTERM or stop_after_steps) after its state was
// saved; the program exits with status 130.
struct Interrupted : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Installs SIGINT and SIGTERM handlers that let the current training step finish, then save.
void install_interrupt_handlers();

struct EvalResult {
  double loss = 0, token_accuracy = 0, exact_match = 0;
  int64_t sentences = 0, tokens = 0;  // evaluated
  int64_t skipped = 0;  // sentences longer than the layout of a model tied to it (absolute positions), not evaluated
  double decode_seconds = 0;  // wall time of the greedy decoding alone
};

struct EpochRecord {
  int64_t epoch = 0;
  double train_loss = 0, seconds = 0;
  EvalResult valid;
};

struct TrainResult {
  std::vector<EpochRecord> history;
  int64_t best_epoch = 0;
  double seconds = 0, tokens_per_second = 0;
  std::string checkpoint;  // DIR/model.safetensors
};

TrainResult train_translator(const TrainOptions& options);

// Teacher-forced loss and token accuracy, and greedy exact-match, over a split. Words unknown to
// the vocabularies become <unk>; an unknown target word never counts as correctly predicted.
// A sentence longer than the model's layout is skipped and counted when the model is tied to its
// layout (absolute positions), and evaluated when it reads longer sentences (rotary).
// The line that says a split's sentences were skipped: "test: 3 sentences longer than the model's
// 14 source and 17 target positions skipped (...)".
std::string skipped_note(const std::string& split, int64_t skipped, const models::TranslatorConfig& config);

EvalResult evaluate(models::Translator& model, const std::vector<data::SentencePair>& pairs,
                    const data::Vocab& english, const data::Vocab& hindi, int64_t batch_size = 256,
                    const models::ForwardOptions& decoding = {});

}  // namespace qkv::app
