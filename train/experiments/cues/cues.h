// train/experiments/cues/cues.h — `qkv cues`'s options and run (cues.cpp), and what it shares with the
// demo: one checkpoint's cue report and its cue attention and knockout tables.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "train/experiments/cues/cue_analysis.h"

namespace qkv::app {

struct CuesOptions {
  std::string checkpoint, split = "sense_context", data_dir = "data/idioms", cues, out,
                          device = "cpu";  // cues empty: DATA/cues.tsv
  std::vector<std::string> compare;
  uint64_t seed = 1;
  int threads = 0;
};

// Measures every checkpoint of o on its split and prints (and with o.out writes) the results.
void run_cues(CuesOptions o);

struct CueResult {
  std::string checkpoint, mode;
  models::CueReport report;
};

// The cue attention table (per model and layer: the cue's peak, the other words' and the share of
// sentences where the cue's is above), a blank line, and the knockout table (per model: trials and
// the flip and change rates of the cue and random knockouts, from target queries and from all queries).
std::string cue_tables(const std::vector<CueResult>& results);

}  // namespace qkv::app
