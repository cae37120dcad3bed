// train/run_config.cpp — a training run's model config from its options and dataset (see
// run_config.h).
#include "run_config.h"

#include <algorithm>
#include <stdexcept>

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
  config.source_vocab = english.size();
  config.target_vocab = hindi.size();
  config.layout = layout_for(ds);
  config.validate();  // e.g. --layers out of range, before anything is written
  for (const std::string& name : ds.available())
    for (const auto& p : ds.split(name)) {
      if (static_cast<int64_t>(p.english.size()) > config.layout.max_source ||
          static_cast<int64_t>(p.hindi.size()) + 1 > config.layout.max_target)
        throw std::runtime_error(p.source + ": sentence is longer than every training sentence");
    }
  return config;
}

}  // namespace qkv::app
