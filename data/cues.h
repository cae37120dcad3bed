// data/cues.h — the cue side file (data/idioms/cues.tsv, written by data/make_idioms.py): for each
// sentence with an ambiguous word or idiom, where that word and its disambiguating cue stand.
// Parsing and checking only; what a model does with them is models/cue_analysis.
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <vector>

namespace qkv::data {

struct CueSentence {
  std::string split;                     // sense_context, idiom_context, test
  std::vector<std::string> english;      // the sentence's words
  std::vector<int64_t> target_positions;  // 0-based: the ambiguous word, or the idiom's fixed words
  int64_t cue_position = 0;              // 0-based, never one of target_positions
  std::string cue;                       // the cue's key in the grammar (river, pond, shoe, ...)
  std::string label;                     // word:sense or idiom:reading (bank:river, cake:idiom)
  std::vector<std::string> reading_hindi;  // the Hindi words that carry this reading (किनारा किनारे ...)
  std::string source;                    // "file:line", for messages
};

// Reads the file (header line first); every error names file:line and the value at fault.
std::vector<CueSentence> load_cues(const std::string& path);
std::vector<CueSentence> parse_cues(std::istream& in, const std::string& path);

}  // namespace qkv::data
