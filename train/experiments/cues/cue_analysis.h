// train/experiments/cues/cue_analysis.h — does the translator use the word that disambiguates? Over the sentences
// of data/idioms/cues.tsv: the attention the target positions put on the cue against the other
// source words, and how often knocking the cue out (against a random other word) changes the
// translation. Measures only; the command, tables and pictures are cues.cpp.
#pragma once

#include <cstdint>
#include <vector>

#include "data/cues.h"
#include "data/dataset.h"
#include "models/translator.h"

namespace qkv::models {

// One sentence's attention in one layer, from a (T, T) weight matrix over the model's positions
// (rows: queries, columns: keys; the target queries are rows [S, S + target_rows)). The statistic
// is each source word's PEAK weight over the target queries (every target position, <sep> through
// the one that emits <eos>), because which target position produces the ambiguous word's
// translation differs by sentence and by model: cue_peak is the cue's, baseline_peak the mean of
// the peaks of the other source words (neither the cue nor the ambiguous word or idiom words).
struct CuePeaks {
  double cue_peak = 0, baseline_peak = 0;
  bool has_baseline = false;  // false when the sentence has no other source word
};
CuePeaks cue_peaks(const std::vector<double>& weights, int64_t T, int64_t S, int64_t target_rows,
                   const data::CueSentence& sentence);

struct CueLayer {
  int64_t layer = 0;                              // 0-based
  double cue_mean = 0, baseline_mean = 0;         // over the sentences with a baseline
  double cue_above_fraction = 0;                  // sentences whose cue peak exceeds their baseline peak
  std::vector<double> cue_peaks, baseline_peaks;  // one per sentence with a baseline (for histograms)
};

struct CueReport {
  int64_t sentences = 0;
  std::vector<CueLayer> layers;
  // Knockout of one source key for every target query in every layer. Counted over the sentences
  // whose greedy translation holds a word of their reading (reading_hindi) and have another source
  // word to knock out instead: a flip is a knocked-out translation that holds none of them (the
  // ambiguous word's translation lost or changed); a change is one that differs in any token.
  int64_t trials = 0, cue_flips = 0, random_flips = 0, cue_changes = 0, random_changes = 0;
  // The same knockouts from every query, the source words' too, so that the cue cannot reach the
  // target through the other words' vectors either (the target-only knockout leaves that path open).
  int64_t cue_flips_all_queries = 0, random_flips_all_queries = 0;
  static double rate(int64_t n, int64_t d) { return d ? static_cast<double>(n) / static_cast<double>(d) : 0.0; }
  double cue_flip_rate() const { return rate(cue_flips, trials); }
  double random_flip_rate() const { return rate(random_flips, trials); }
  double cue_flip_rate_all_queries() const { return rate(cue_flips_all_queries, trials); }
  double random_flip_rate_all_queries() const { return rate(random_flips_all_queries, trials); }
};

// Translates each sentence, records every layer's attention over its own translation, and runs the
// two knockouts. The random word is drawn per sentence from a generator seeded with `seed`, so a
// rerun draws the same words. Sentences longer than the model reads throw naming their file:line.
CueReport measure_cues(Translator& model, const std::vector<data::CueSentence>& sentences,
                       const data::Vocab& english_vocab, const data::Vocab& hindi_vocab, uint64_t seed);

}  // namespace qkv::models
