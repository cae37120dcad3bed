// train/experiments/cues/cue_analysis.cpp — cue attention and the knockout flip rates (see cue_analysis.h). The
// weights come from the model's own recording; nothing here recomputes attention.
#include "cue_analysis.h"

#include <fmt/format.h>

#include <algorithm>
#include <random>
#include <stdexcept>

#include "framework/autograd.h"

namespace qkv::models {

namespace {

// The positions of the sentence's other source words: neither the cue nor the ambiguous word or idiom.
std::vector<int64_t> other_words(const data::CueSentence& s) {
  std::vector<int64_t> others;
  for (int64_t j = 0; j < static_cast<int64_t>(s.english.size()); ++j)
    if (j != s.cue_position &&
        std::find(s.target_positions.begin(), s.target_positions.end(), j) == s.target_positions.end())
      others.push_back(j);
  return others;
}

double peak_over_target_rows(const std::vector<double>& weights, int64_t T, int64_t S, int64_t target_rows,
                             int64_t key) {
  double peak = 0;
  for (int64_t t = 0; t < target_rows; ++t) peak = std::max(peak, weights[(S + t) * T + key]);
  return peak;
}

bool holds_reading(const std::vector<std::string>& hindi, const data::CueSentence& s) {
  for (const std::string& w : hindi)
    if (std::find(s.reading_hindi.begin(), s.reading_hindi.end(), w) != s.reading_hindi.end()) return true;
  return false;
}

// The greedy translation of one sentence under a knockout of `key` in every layer, for every target
// query or (all_queries) for every query, the source words' too.
std::vector<std::string> translate_knocked_out(Translator& model, const std::vector<std::string>& english,
                                               const data::Vocab& english_vocab, const data::Vocab& hindi_vocab,
                                               int64_t key, bool all_queries) {
  const int64_t n = static_cast<int64_t>(english.size()), S = model.source_slots(n);
  const Knockout knockout = {
      .key = key, .query_from = all_queries ? 0 : S, .query_to = S + model.decode_limit(n) + 1, .layer = -1};
  return model.translate({english}, english_vocab, hindi_vocab, {.knockout = knockout})[0];
}

}  // namespace

CuePeaks cue_peaks(const std::vector<double>& weights, int64_t T, int64_t S, int64_t target_rows,
                   const data::CueSentence& sentence) {
  const int64_t n = static_cast<int64_t>(sentence.english.size());
  if (static_cast<int64_t>(weights.size()) != T * T || n > S || target_rows < 1 || S + target_rows > T)
    throw std::runtime_error(fmt::format("{}: cue_peaks: {} weights for T = {}, S = {}, {} target rows and {} words",
                                         sentence.source, weights.size(), T, S, target_rows, n));
  CuePeaks r;
  r.cue_peak = peak_over_target_rows(weights, T, S, target_rows, sentence.cue_position);
  const std::vector<int64_t> others = other_words(sentence);
  double sum = 0;
  for (const int64_t j : others) sum += peak_over_target_rows(weights, T, S, target_rows, j);
  r.has_baseline = !others.empty();
  r.baseline_peak = others.empty() ? 0.0 : sum / static_cast<double>(others.size());
  return r;
}

CueReport measure_cues(Translator& model, const std::vector<data::CueSentence>& sentences,
                       const data::Vocab& english_vocab, const data::Vocab& hindi_vocab, uint64_t seed) {
  const int64_t most_words = model.reads_longer() ? data::kMaxSentenceWords : model.config().layout.max_source;
  CueReport report;
  report.layers.resize(static_cast<size_t>(model.layers()));
  for (size_t l = 0; l < report.layers.size(); ++l) report.layers[l].layer = static_cast<int64_t>(l);
  std::mt19937_64 random_words(seed);
  for (const data::CueSentence& s : sentences) {
    if (static_cast<int64_t>(s.english.size()) > most_words)
      throw std::runtime_error(fmt::format("{}: the sentence has {} words; this model reads at most {}", s.source,
                                           s.english.size(), most_words));
    const std::vector<std::string> hindi = model.translate({s.english}, english_vocab, hindi_vocab)[0];
    const data::Layout layout =
        model.layout_fitting(static_cast<int64_t>(s.english.size()), static_cast<int64_t>(hindi.size()) + 1);
    const int64_t S = layout.max_source, T = layout.length();
    ++report.sentences;
    // attention over the model's own translation, every layer
    const data::SentencePair pair{s.english, hindi, s.source};
    {
      NoGradGuard no_grad;
      const data::Batch batch = data::make_batch({pair}, {0}, english_vocab, hindi_vocab, layout, model.device());
      model.forward(batch, {.record_attention = true});
    }
    const int64_t target_rows = std::min<int64_t>(static_cast<int64_t>(hindi.size()) + 1, layout.max_target);
    for (CueLayer& layer : report.layers) {
      const CuePeaks peaks = cue_peaks(model.last_attention(layer.layer).to_vector(), T, S, target_rows, s);
      if (!peaks.has_baseline) continue;
      layer.cue_peaks.push_back(peaks.cue_peak);
      layer.baseline_peaks.push_back(peaks.baseline_peak);
    }
    // the knockouts: the cue, and one other word drawn for every sentence (so the draws do not
    // depend on the model)
    const std::vector<int64_t> others = other_words(s);
    const int64_t random_key = others.empty() ? -1 : others[random_words() % others.size()];
    if (random_key < 0 || !holds_reading(hindi, s)) continue;
    ++report.trials;
    const auto cue_out = translate_knocked_out(model, s.english, english_vocab, hindi_vocab, s.cue_position, false);
    const auto random_out = translate_knocked_out(model, s.english, english_vocab, hindi_vocab, random_key, false);
    report.cue_changes += cue_out != hindi;
    report.random_changes += random_out != hindi;
    report.cue_flips += !holds_reading(cue_out, s);
    report.random_flips += !holds_reading(random_out, s);
    report.cue_flips_all_queries +=
        !holds_reading(translate_knocked_out(model, s.english, english_vocab, hindi_vocab, s.cue_position, true), s);
    report.random_flips_all_queries +=
        !holds_reading(translate_knocked_out(model, s.english, english_vocab, hindi_vocab, random_key, true), s);
  }
  for (CueLayer& layer : report.layers) {
    const size_t n = layer.cue_peaks.size();
    if (n == 0) continue;
    int64_t above = 0;
    for (size_t i = 0; i < n; ++i) {
      layer.cue_mean += layer.cue_peaks[i] / static_cast<double>(n);
      layer.baseline_mean += layer.baseline_peaks[i] / static_cast<double>(n);
      above += layer.cue_peaks[i] > layer.baseline_peaks[i] ? 1 : 0;
    }
    layer.cue_above_fraction = static_cast<double>(above) / static_cast<double>(n);
  }
  return report;
}

}  // namespace qkv::models
