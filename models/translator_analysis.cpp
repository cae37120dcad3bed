// models/translator_analysis.cpp — what the inspection commands ask of a translator: a knockout (one
// key hidden from a range of queries), one English word's vector after every block (the sense probe,
// the bank table) and greedy decoding with one layer's attention traced (attend, the pictures).
#include <fmt/format.h>

#include <stdexcept>

#include "framework/autograd.h"
#include "framework/ops.h"
#include "models/translator.h"

namespace qkv::models {

AttentionMask Knockout::applied(AttentionMask mask, size_t block) const {
  if (!applies_to(block)) return mask;
  mask.knockout_key = key;
  mask.knockout_from = query_from;
  mask.knockout_to = query_to;
  return mask;
}

void Knockout::validate(int64_t sequence_length, int64_t layers) const {
  if (!active()) return;
  if (key >= sequence_length || query_from < 0 || query_to > sequence_length || query_from >= query_to)
    throw std::runtime_error(
        fmt::format("knockout: key {} and queries [{}, {}) must lie in the {} positions of the sequence (queries a "
                    "non-empty range)",
                    key, query_from, query_to, sequence_length));
  if (layer < -1 || layer >= layers)
    throw std::runtime_error(
        fmt::format("knockout: layer {} is out of range: this model has {} layer{} (0 to {}, or -1 for all)", layer,
                    layers, layers == 1 ? "" : "s", layers - 1));
}

std::vector<std::vector<std::vector<double>>> source_word_states(Translator& model,
                                                                 const std::vector<std::vector<std::string>>& english,
                                                                 const std::vector<int64_t>& positions,
                                                                 const data::Vocab& english_vocab) {
  if (english.size() != positions.size())
    throw std::runtime_error(
        fmt::format("source_word_states: {} sentences but {} positions", english.size(), positions.size()));
  int64_t longest = 0;
  for (const auto& words : english) longest = std::max(longest, static_cast<int64_t>(words.size()));
  const int64_t S = model.layout_fitting(longest, 1).max_source, D = model.config().d_model, chunk = 256;
  std::vector<std::vector<std::vector<double>>> states(model.layers() + 1);
  NoGradGuard no_grad;
  for (size_t first = 0; first < english.size(); first += chunk) {
    const size_t B = std::min(english.size() - first, static_cast<size_t>(chunk));
    std::vector<int64_t> ids(B * S, data::Vocab::PAD);
    data::Batch batch;
    for (size_t b = 0; b < B; ++b) {
      const auto& words = english[first + b];
      const int64_t p = positions[first + b];
      if (static_cast<int64_t>(words.size()) > S || p < 0 || p >= static_cast<int64_t>(words.size()))
        throw std::runtime_error(
            fmt::format("source_word_states: word position {} of a {}-word sentence (the model reads at most {})", p,
                        words.size(), S));
      for (size_t i = 0; i < words.size(); ++i) ids[b * S + i] = english_vocab.id(words[i]);
      batch.source_lengths.push_back(static_cast<int64_t>(words.size()));
    }
    batch.source = Tensor::from_ids(ids, {static_cast<int64_t>(B), S}, model.device());
    batch.target_input = Tensor::from_ids(std::vector<int64_t>(B, data::Vocab::SEP), {static_cast<int64_t>(B), 1},
                                          model.device());  // source positions never see it
    std::vector<Tensor> outputs;
    model.forward(batch, {.layer_outputs = &outputs});
    for (size_t l = 0; l < outputs.size(); ++l) {
      const std::vector<double> all = outputs[l].to_vector();  // (B, T, D)
      const int64_t T = outputs[l].size(1);
      for (size_t b = 0; b < B; ++b) {
        const auto row = all.begin() + (static_cast<int64_t>(b) * T + positions[first + b]) * D;
        states[l].emplace_back(row, row + D);
      }
    }
  }
  return states;
}

AttentionTrace trace_attention(Translator& model, const std::vector<std::string>& english,
                               const data::Vocab& english_vocab, const data::Vocab& hindi_vocab, int64_t layer,
                               const Knockout& knockout, int64_t max_length) {
  model.last_attention(layer);  // checks the range before any work
  AttentionTrace trace;
  trace.layer = layer;
  trace.layers = model.layers();
  trace.english = english;
  trace.hindi =
      model.translate({english}, english_vocab, hindi_vocab, {.knockout = knockout, .max_length = max_length})[0];
  // One teacher-forced pass over the model's own translation exposes the weights used for it.
  const data::Layout layout =
      model.layout_fitting(static_cast<int64_t>(english.size()), static_cast<int64_t>(trace.hindi.size()) + 1);
  data::SentencePair pair{english, trace.hindi, "<sentence>"};
  NoGradGuard no_grad;
  const data::Batch batch = data::make_batch({pair}, {0}, english_vocab, hindi_vocab, layout, model.device());
  // the knockout's queries reach as far as decoding could write; the traced pass holds the
  // translation alone (a rotary or alibi model lays it out at its own length), so they are cut to it
  Knockout traced = knockout;
  traced.query_to = std::min(traced.query_to, layout.length());
  if (traced.active() && traced.query_from >= traced.query_to) traced = Knockout{};
  model.forward(batch, {.record_attention = true, .knockout = traced});
  const Tensor keep = model.attention_mask(batch);
  const std::vector<double> weights = model.last_attention(layer).to_vector(), allowed = keep.to_vector();
  std::vector<int64_t> positions;
  for (int64_t i = 0; i < static_cast<int64_t>(english.size()); ++i) positions.push_back(i);
  for (int64_t i = 0; i <= static_cast<int64_t>(trace.hindi.size()); ++i) positions.push_back(layout.max_source + i);
  trace.labels = english;
  trace.labels.push_back("<sep>");
  for (const auto& w : trace.hindi) trace.labels.push_back(w);
  const int64_t T = layout.length();
  for (int64_t qi : positions)
    for (int64_t kj : positions) {
      trace.weights.push_back(weights[qi * T + kj]);
      trace.masked.push_back(allowed[qi * T + kj] == 0.0 ? 1 : 0);
    }
  // Replace unknown words' labels so pictures show what the model saw.
  for (size_t i = 0; i < english.size(); ++i)
    if (!english_vocab.contains(english[i])) trace.labels[i] = "<unk>";
  return trace;
}

}  // namespace qkv::models
