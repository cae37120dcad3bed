// train/run/run_config.cpp — a training run's model config from its options and dataset (see
// run_config.h).
#include "train/run/run_config.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

namespace qkv::app {

data::Layout layout_for(const data::Dataset& ds) {
  data::Layout layout;
  for (const auto& p : ds.train) {
    layout.max_source = std::max<int64_t>(layout.max_source, static_cast<int64_t>(p.english.size()));
    layout.max_target = std::max<int64_t>(layout.max_target, static_cast<int64_t>(p.hindi.size()) + 1);
  }
  return layout;
}

models::TranslatorConfig translator_config(const TrainOptions& o, const data::Dataset& ds, const data::Vocab& english,
                                           const data::Vocab& hindi) {
  models::TranslatorConfig config;
  config.attention = o.attention;
  config.layers = o.layers;
  config.d_model = o.d_model;
  config.d_k = o.d_k;
  config.d_ff = o.d_ff;
  config.activation = o.activation;
  config.positions = o.positions;
  config.frozen_embeddings = o.freeze_embeddings;
  config.source_vocab = english.size();
  config.target_vocab = hindi.size();
  const data::Layout train_layout = layout_for(ds);
  config.layout = train_layout;
  // The layout is a setting: train's longest sentence unless asked for more (never less: a train
  // sentence must fit).
  if (o.max_source > 0) {
    if (o.max_source < train_layout.max_source)
      throw std::runtime_error(
          fmt::format("--max-source {} is shorter than the longest train sentence ({} words): "
                      "give at least {}, or 0 for train's longest",
                      o.max_source, train_layout.max_source, train_layout.max_source));
    config.layout.max_source = o.max_source;
  }
  if (o.max_target > 0) {
    if (o.max_target < train_layout.max_target)
      throw std::runtime_error(
          fmt::format("--max-target {} is shorter than the longest train translation ({} "
                      "positions with <eos>): give at least {}, or 0 for train's longest",
                      o.max_target, train_layout.max_target, train_layout.max_target));
    config.layout.max_target = o.max_target;
  }
  config.validate();  // e.g. --layers out of range, before anything is written
  return config;
}

int64_t sentences_past_layout(const models::Translator& model, const std::vector<data::SentencePair>& pairs) {
  if (model.reads_longer()) return 0;
  const data::Layout layout = model.config().layout;
  int64_t past = 0;
  for (const auto& p : pairs)
    past += static_cast<int64_t>(p.english.size()) > layout.max_source ||
            static_cast<int64_t>(p.hindi.size()) + 1 > layout.max_target;
  return past;
}

}  // namespace qkv::app
