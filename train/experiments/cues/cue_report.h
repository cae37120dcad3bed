// train/experiments/cues/cue_report.h — what `qkv cues` shares with the demo: one checkpoint's cue report
// and its cue attention and knockout tables (cue_report.cpp).
#pragma once

#include <string>
#include <vector>

#include "train/experiments/cues/cue_analysis.h"

namespace qkv::app {

struct CueResult {
  std::string checkpoint, mode;
  models::CueReport report;
};

// The cue attention table (per model and layer: the cue's peak, the other words' and the share of
// sentences where the cue's is above), a blank line, and the knockout table (per model: trials and
// the flip and change rates of the cue and random knockouts, from target queries and from all queries).
std::string cue_tables(const std::vector<CueResult>& results);

}  // namespace qkv::app
