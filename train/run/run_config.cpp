// train/run/run_config.cpp — a training run's model config from its options and dataset (see
// run_config.h).
#include "train/run/run_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace qkv::app {

// The layout that fits every sentence of the training split.
static data::Layout layout_for(const data::Dataset& ds) {
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
  // the model table's Option rows come from the options of the same name, the Derived ones from below
#define QKV_COPY_Option(member) config.member = o.member;
#define QKV_COPY_Derived(member)
#define QKV_COPY_SETTING(type, member, default_value, absent, low, high, from) QKV_COPY_##from(member)
  QKV_MODEL_SETTINGS(QKV_COPY_SETTING)
#undef QKV_COPY_SETTING
#undef QKV_COPY_Derived
#undef QKV_COPY_Option
  config.frozen_embeddings = o.freeze_embeddings;
  config.source_vocab = english.size();
  config.target_vocab = hindi.size();
  const data::Layout train_layout = layout_for(ds);
  config.layout = train_layout;
  // The layout is a setting: train's longest sentence unless asked for more (never less: a train
  // sentence must fit).
  const auto at_least_train = [](int64_t asked, int64_t trains, const char* flag, const std::string& longest) {
    if (asked > 0 && asked < trains)
      throw std::runtime_error(
          fmt::format("{} {} is shorter than the longest train {}: give at least {}, or 0 for train's longest", flag,
                      asked, longest, trains));
    return asked > 0 ? asked : trains;
  };
  config.layout.max_source = at_least_train(o.max_source, train_layout.max_source, "--max-source",
                                            fmt::format("sentence ({} words)", train_layout.max_source));
  config.layout.max_target =
      at_least_train(o.max_target, train_layout.max_target, "--max-target",
                     fmt::format("translation ({} positions with <eos>)", train_layout.max_target));
  config.random_positions =
      o.random_positions != kAutoRandomPositions ? o.random_positions
      : models::has_rotary(o.positions)
          ? std::min(kAutoRandomPositionsFactor * config.layout.length(), models::TranslatorConfig::kMaxRandomPositions)
          : 0;
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

std::pair<data::Vocab, data::Vocab> train_vocabularies(const data::Dataset& ds) {
  std::vector<std::vector<std::string>> english, hindi;
  for (const auto& p : ds.train) english.push_back(p.english), hindi.push_back(p.hindi);
  if (ds.targets_turned)  // in reading order, so that a word has the id a left-to-right model gives it
    for (auto& sentence : hindi) std::ranges::reverse(sentence);
  return {data::Vocab::build(english), data::Vocab::build(hindi)};
}

void check_validation_measures(const models::Translator& model, const data::Dataset& ds, const std::string& data_dir) {
  const data::Layout layout = model.config().layout;
  if (!ds.valid.empty() && sentences_past_layout(model, ds.valid) == static_cast<int64_t>(ds.valid.size()))
    throw std::runtime_error(fmt::format(
        "{}/valid.tsv: every one of its {} sentences is longer than the model's {} source and {} target positions, "
        "so validation would measure nothing; give a wider --max-source/--max-target, or --positions rotary or alibi",
        data_dir, ds.valid.size(), layout.max_source, layout.max_target));
}

}  // namespace qkv::app
