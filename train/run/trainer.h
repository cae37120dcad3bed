// train/run/trainer.h — training and evaluation of the translator, shared by `qkv train`,
// `qkv eval` and `qkv demo`. Progress goes to stdout; files are written atomically.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "models/translator.h"
#include "train/run/train_options.h"
#include "train/run/training_run.h"

namespace qkv::app {

// TrainOptions, the options of a run, is made from the option table in train_options.h; the run's
// results and state are in training_run.h.

// Installs SIGINT and SIGTERM handlers that let the current training step finish, then save.
void install_interrupt_handlers();

TrainResult train_translator(const TrainOptions& options);

// Teacher-forced loss and token accuracy, and greedy exact-match, over a split. Words unknown to
// the vocabularies become <unk>; an unknown target word never counts as correctly predicted.
// A sentence longer than the model's layout is skipped and counted when the model is tied to its
// layout (absolute positions), and evaluated when it reads longer sentences (rotary).
// The line that says a split's sentences were skipped: "test: 3 sentences longer than the model's
// 14 source and 17 target positions skipped (...)".
std::string skipped_note(const std::string& split, int64_t skipped, const models::TranslatorConfig& config);

// With oracle_length, each sentence is decoded to exactly its reference's length (qkv eval --oracle-length).
EvalResult evaluate(models::Translator& model, const std::vector<data::SentencePair>& pairs, const data::Vocab& english,
                    const data::Vocab& hindi, int64_t batch_size = 256, const models::ForwardOptions& decoding = {},
                    bool oracle_length = false);

}  // namespace qkv::app
