// train/experiments/probe/probe.h — the sense probe as the `probe` command and the demo use it (probe.cpp):
// options, one result per checkpoint, the console table and the TSV/JSON/PNG files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/cues.h"
#include "train/experiments/probe/sense_probe.h"

namespace qkv::app {

struct ProbeOptions {
  std::string data_dir = "data/idioms", split = "train", cues, out, device = "cpu";  // cues empty: DATA/cues.tsv
  int64_t per_sense = 300;  // sentences of each sense of each word
  uint64_t seed = 1;
  int threads = 0;
};

struct ProbeResult {
  std::string checkpoint, mode;
  models::SenseProbeReport report;
};

// The words with two senses and their sentences (none when the split has no sentences of both senses).
std::vector<data::SenseWord> load_sense_words(const ProbeOptions& o);
std::vector<ProbeResult> run_probes(const ProbeOptions& o, const std::vector<std::string>& checkpoints);
std::string probe_table(const std::vector<ProbeResult>& results);
// DIR/sense_probe.tsv, .json and .png (a line per model: mean accuracy against layer).
void write_probe_files(const std::vector<ProbeResult>& results, const ProbeOptions& o, const std::string& dir);

}  // namespace qkv::app
