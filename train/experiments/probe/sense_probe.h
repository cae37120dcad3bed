// train/experiments/probe/sense_probe.h — does a word's vector tell its sense? A logistic-regression probe per layer on
// the vector of an ambiguous word (bank: river or money), fitted on one half of the examples and scored
// on the other. Chance is 50%: both senses have the same number of examples in each half.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/cues.h"
#include "models/translator.h"

namespace qkv::models {

// L2-regularised logistic regression on standardised features (the fitted half's mean and standard
// deviation), solved by Newton's method; returns the accuracy on the rows with fit[i] false. A row
// is predicted sense 1 when its probability exceeds 0.5, so features that do not vary score chance.
double probe_accuracy(const std::vector<std::vector<double>>& features, const std::vector<int>& labels,
                      const std::vector<bool>& fit, double l2 = 1e-2);

struct SenseProbeReport {
  std::vector<std::string> words;             // bank, bat, ...
  std::vector<int64_t> examples;              // per word, both halves
  std::vector<std::vector<double>> accuracy;  // [layer][word]; layer 0 is the input embedding
  double mean(size_t layer) const;            // over the words
};

// The probe on each word of `words` after every layer of `model`.
SenseProbeReport probe_senses(Translator& model, const std::vector<data::SenseWord>& words,
                              const data::Vocab& english_vocab);

}  // namespace qkv::models
