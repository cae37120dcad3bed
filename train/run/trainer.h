// train/run/trainer.h — training the translator, shared by `qkv train`, `qkv ablate` and `qkv demo`.
// Progress goes to stdout; files are written atomically. Evaluation is in evaluate.h.
#pragma once

#include "data/dataset.h"
#include "models/translator.h"
#include "train/run/train_options.h"
#include "train/run/evaluate.h"
#include "train/run/training_run.h"

namespace qkv::app {

// TrainOptions, the options of a run, is made from the option table in train_options.h; the run's
// results and state are in training_run.h.

// Installs SIGINT and SIGTERM handlers that let the current training step finish, then save.
void install_interrupt_handlers();

TrainResult train_translator(const TrainOptions& options);

}  // namespace qkv::app
