// train/experiments/attend/attend.h — `qkv attend`'s options and run (attend.cpp), and what it shares
// with the demo: the heatmap of one traced attention matrix and its layer's name.
#pragma once

#include <cstdint>
#include <string>

#include "models/translator.h"
#include "tools/render/render.h"

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

// "layer 2 of 3": the traced layer, 1-based as attend's --layer counts.
std::string layer_name(const models::AttentionTrace& trace);
// The picture of `trace` (rows: queries, columns: keys; masked cells hatched), titled with the
// sentence, its translation, the mode, the layer and the checkpoint.
render::HeatmapSpec attention_heatmap(const models::AttentionTrace& trace, const std::string& mode,
                                      const std::string& checkpoint);

}  // namespace qkv::app
