// train/run/evaluate.cpp — a model scored on a split: teacher-forced loss and token accuracy, then
// greedy exact match with each sentence's stops counted.
#include "train/run/evaluate.h"

#include <fmt/format.h>

#include <algorithm>

#include "framework/autograd.h"
#include "framework/ops.h"
#include "train/run/run_config.h"

namespace qkv::app {

data::Layout trimmed_layout(const data::Layout& layout, const std::vector<data::SentencePair>& pairs,
                            const std::vector<size_t>& idx) {
  int64_t longest = 1;
  for (size_t i : idx) longest = std::max(longest, static_cast<int64_t>(pairs[i].hindi.size()) + 1);
  data::Layout trimmed = layout;
  trimmed.max_target = std::min(layout.max_target, longest);
  return trimmed;
}

// The layout for evaluating pairs[idx]: the model's, grown to fit them when it reads longer
// sentences (rotary positions), then trimmed as above.
static data::Layout evaluation_layout(const models::Translator& model, const std::vector<data::SentencePair>& pairs,
                                      const std::vector<size_t>& idx) {
  int64_t source = 1, target = 1;
  for (size_t i : idx) {
    source = std::max(source, static_cast<int64_t>(pairs[i].english.size()));
    target = std::max(target, static_cast<int64_t>(pairs[i].hindi.size()) + 1);
  }
  const data::Layout own = model.config().layout;
  const data::Layout fitting =
      model.reads_longer() ? model.layout_fitting(source, target) : own;  // a tied model's pairs were filtered
  return trimmed_layout(fitting, pairs, idx);
}

EvalResult evaluate(models::Translator& model, const std::vector<data::SentencePair>& all_pairs,
                    const data::Vocab& english, const data::Vocab& hindi, int64_t batch_size,
                    const models::ForwardOptions& decoding, bool oracle_length) {
  NoGradGuard no_grad;
  const bool was_training = model.training();
  model.train(false);
  EvalResult r;
  // A model tied to its layout (a position embedding) cannot read a longer sentence: those are
  // counted and skipped. One that reads longer sentences takes them all.
  std::vector<data::SentencePair> readable;
  const bool filter = sentences_past_layout(model, all_pairs) > 0;
  if (filter) {
    const data::Layout layout = model.config().layout;
    for (const auto& p : all_pairs) {
      if (static_cast<int64_t>(p.english.size()) <= layout.max_source &&
          static_cast<int64_t>(p.hindi.size()) + 1 <= layout.max_target)
        readable.push_back(p);
      else
        ++r.skipped;
    }
  }
  const std::vector<data::SentencePair>& pairs = filter ? readable : all_pairs;
  double loss_sum = 0;
  int64_t correct_tokens = 0, exact = 0;
  for (size_t start = 0; start < pairs.size(); start += batch_size) {
    std::vector<size_t> idx;
    for (size_t i = start; i < std::min(pairs.size(), start + batch_size); ++i) idx.push_back(i);
    const data::Batch batch =
        data::make_batch(pairs, idx, english, hindi, evaluation_layout(model, pairs, idx), model.device());
    // teacher-forced loss and token accuracy over real target tokens (incl. <eos>)
    Tensor logits = model.forward(batch);
    const std::vector<int64_t> targets = batch.target_output.to_ids();
    int64_t counted = 0;
    for (int64_t t : targets) counted += t != data::Vocab::PAD;
    loss_sum += cross_entropy(logits, batch.target_output, data::Vocab::PAD).item() * counted;
    const std::vector<int64_t> predicted = max_with_indices(logits, -1).indices.to_ids();
    // A target word the vocabulary lacks became <unk>; predicting <unk> does not produce it.
    for (size_t i = 0; i < targets.size(); ++i)
      if (targets[i] != data::Vocab::PAD && targets[i] != data::Vocab::UNK && predicted[i] == targets[i])
        ++correct_tokens;
    r.tokens += counted;
    // greedy exact match
    std::vector<std::vector<std::string>> sources;
    for (size_t i : idx) sources.push_back(pairs[i].english);
    const auto decode_start = Clock::now();
    std::vector<uint8_t> cut;
    std::vector<int64_t> reference_lengths;
    for (size_t i : idx) reference_lengths.push_back(static_cast<int64_t>(pairs[i].hindi.size()));
    models::ForwardOptions options = decoding;
    options.cut_at_limit = &cut;
    if (oracle_length) options.exact_lengths = &reference_lengths;
    const auto outputs = model.translate(sources, english, hindi, options);
    r.decode_seconds += seconds_since(decode_start);
    for (size_t k = 0; k < idx.size(); ++k) {
      const std::vector<std::string>& reference = pairs[idx[k]].hindi;
      exact += outputs[k] == reference;
      r.cut_at_limit += cut[k];
      r.stopped_early += outputs[k].size() < reference.size();
      r.stopped_late += outputs[k].size() > reference.size();
      r.unreachable +=
          std::ranges::any_of(reference, [&](const std::string& w) { return hindi.id(w) == data::Vocab::UNK; });
    }
  }
  r.sentences = static_cast<int64_t>(pairs.size());
  r.loss = r.tokens ? loss_sum / r.tokens : 0;
  r.token_accuracy = r.tokens ? static_cast<double>(correct_tokens) / r.tokens : 0;
  r.exact_match = r.sentences ? static_cast<double>(exact) / r.sentences : 0;
  model.train(was_training);
  return r;
}

std::string skipped_note(const std::string& split, int64_t skipped, const models::TranslatorConfig& config) {
  return fmt::format(
      "{}: {} sentence{} longer than the model's {} source and {} target positions skipped (its {} positions cannot "
      "read past them; train with --positions rotary or alibi, or a larger --max-source and --max-target)",
      split, skipped, skipped == 1 ? "" : "s", config.layout.max_source, config.layout.max_target,
      models::positions_name(config.positions));
}

}  // namespace qkv::app
