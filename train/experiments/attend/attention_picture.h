// train/experiments/attend/attention_picture.h — what `attend` shares with the demo (attention_picture.cpp):
// the heatmap of one traced attention matrix and its layer's name.
#pragma once

#include <string>

#include "models/translator.h"
#include "tools/render/render.h"

namespace qkv::app {

// "layer 2 of 3": the traced layer, 1-based as attend's --layer counts.
std::string layer_name(const models::AttentionTrace& trace);
// The picture of `trace` (rows: queries, columns: keys; masked cells hatched), titled with the
// sentence, its translation, the mode, the layer and the checkpoint.
render::HeatmapSpec attention_heatmap(const models::AttentionTrace& trace, const std::string& mode,
                                      const std::string& checkpoint);

}  // namespace qkv::app
