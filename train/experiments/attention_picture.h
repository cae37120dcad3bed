// train/experiments/attention_picture.h — what `attend` (attend.cpp) shares with the demo: the heatmap of one traced
// attention matrix.
#pragma once

#include <string>

#include "models/translator.h"
#include "tools/render/render.h"

namespace qkv::app {

// The picture of `trace` (rows: queries, columns: keys; masked cells hatched), titled with the
// sentence, its translation, the mode, the layer and the checkpoint.
render::HeatmapSpec attention_heatmap(const models::AttentionTrace& trace, const std::string& mode,
                                      const std::string& checkpoint);

}  // namespace qkv::app
