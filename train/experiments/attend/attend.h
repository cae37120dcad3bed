// train/experiments/attend/attend.h — `qkv attend`'s options and run (attend.cpp).
#pragma once

#include <cstdint>
#include <string>

namespace qkv::app {

struct AttendOptions {
  std::string checkpoint, compare, sentence, out, format, device = "cpu";
  int64_t layer = 0;                   // 1-based, when layer_given
  bool layer_given = false;            // otherwise: the last layer of each model
  int threads = 0;                     // --threads
  int64_t max_length = 0;              // --max-length (0: the model's own limit)
  std::string knockout;                // QUERY:KEY, row and column numbers of the text map (0-based)
  std::string knockout_layer = "all";  // 1-based layer or all
};

// Draws or prints the attention of o.sentence (or, with o.knockout, translates it without and with
// the knockout).
void run_attend(const AttendOptions& o);

}  // namespace qkv::app
