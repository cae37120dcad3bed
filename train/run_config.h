// train/run_config.h — a training run's model config from its options and dataset (the trainer
// builds its model from it; a resumed run's state must hold the same).
#pragma once

#include "data/dataset.h"
#include "models/translator.h"
#include "trainer.h"

namespace qkv::app {

// The layout that fits every sentence of the training split.
data::Layout layout_for(const data::Dataset& ds);

// The run's model config: the options' architecture, the vocabularies' sizes and the layout of the
// training split, which every split present must fit (a longer sentence throws naming its file).
models::TranslatorConfig translator_config(const TrainOptions& o, const data::Dataset& ds, const data::Vocab& english,
                                           const data::Vocab& hindi);

}  // namespace qkv::app
