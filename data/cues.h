// data/cues.h — the cue side file (data/idioms/cues.tsv, written by data/make_idioms.py): for each
// sentence with an ambiguous word or idiom, where that word and its disambiguating cue stand.
// Parsing and checking only; what a model does with them is train/experiments/cues/cue_analysis.
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

#include "data/dataset.h"

namespace qkv::data {

struct CueSentence {
  std::string split;                      // sense_context, idiom_context, test
  std::vector<std::string> english;       // the sentence's words
  std::vector<int64_t> target_positions;  // 0-based: the ambiguous word, or the idiom's fixed words
  int64_t cue_position = 0;               // 0-based, never one of target_positions
  std::string cue;                        // the cue's key in the grammar (river, pond, shoe, ...)
  std::string label;                      // word:sense or idiom:reading (bank:river, cake:idiom)
  std::vector<std::string> reading_hindi;  // the Hindi words that carry this reading (किनारा किनारे ...)
  std::string source;                      // "file:line", for messages
};

// The cue file of a dataset directory (DIR/cues.tsv), which `qkv cues`, `qkv probe` and the demo read.
std::string cue_file_of(const std::string& data_dir);
// Reads the file (header line first); every error names file:line and the value at fault.
std::vector<CueSentence> load_cues(const std::string& path);
std::vector<CueSentence> parse_cues(std::istream& in, const std::string& path);

// Examples for the sense probe: one ambiguous word with two senses (bank: river or money) and
// sentences of each, `position` being where the word stands and `sense` 0 or 1 (an index into senses).
struct SenseExample {
  std::vector<std::string> english;
  int64_t position = 0;
  int sense = 0;
  bool probe_train = false;  // in the half the probe is fitted on (the other half scores it)
};
struct SenseWord {
  std::string word, senses[2];  // from cue labels word:sense, e.g. bank, river, money
  std::vector<SenseExample> examples;
};

// The words of `cues` with exactly two senses among its labels, each with `per_sense` sentences of
// `pairs` of each sense (fewer when `pairs` holds fewer; both senses get the same number): the word
// appears once in the English, and the Hindi holds a word of one sense's reading_hindi and none of
// the other's. Drawn in an order shuffled by `seed`; half of each sense is marked probe_train.
std::vector<SenseWord> sense_examples(const std::vector<SentencePair>& pairs, const std::vector<CueSentence>& cues,
                                      int64_t per_sense, uint64_t seed);

}  // namespace qkv::data
