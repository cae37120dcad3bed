// train/experiments/cues/cues.h — `qkv cues`'s options and run (cues.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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

}  // namespace qkv::app
