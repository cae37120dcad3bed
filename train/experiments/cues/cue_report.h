// train/experiments/cues/cue_report.h — what `qkv cues` shares with the demo: one checkpoint's cue report
// and the knockout table (cue_report.cpp).
#pragma once

#include <string>
#include <vector>

#include "train/experiments/cues/cue_analysis.h"

namespace qkv::app {

struct CueResult {
  std::string checkpoint, mode;
  models::CueReport report;
};

// Per model: trials and the flip and change rates of the cue and random knockouts, from target
// queries and from all queries, one line each.
std::string knockout_table(const std::vector<CueResult>& results);

}  // namespace qkv::app
