// train/run/run_config.h — a training run's model config from its options and dataset (the trainer
// builds its model from it; a resumed run's state must hold the same).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "data/dataset.h"
#include "models/translator.h"
#include "train/run/train_options.h"

namespace qkv::app {

// The run's model config: the options' architecture and positions, the vocabularies' sizes and the
// layout: --max-source and --max-target, or the training split's longest (a value shorter than a
// train sentence throws naming the fix). Valid and test sentences may be longer: evaluation skips
// them for a model tied to its layout (sentences_past_layout) and reads them otherwise.
models::TranslatorConfig translator_config(const TrainOptions& o, const data::Dataset& ds, const data::Vocab& english,
                                           const data::Vocab& hindi);

// How many of `pairs` the model cannot read: longer than its layout when it has a position
// embedding (absolute positions), else none.
int64_t sentences_past_layout(const models::Translator& model, const std::vector<data::SentencePair>& pairs);

std::pair<data::Vocab, data::Vocab> train_vocabularies(const data::Dataset& ds);

// Refuses a run whose valid sentences are all past the model's layout: validation would measure nothing.
void check_validation_measures(const models::Translator& model, const data::Dataset& ds, const std::string& data_dir);

}  // namespace qkv::app
