// train/experiments/attend/attention_picture.cpp — the picture of one traced attention matrix, as `qkv
// attend` draws it and the demo shows it, and the layer's name in its title.
#include "train/experiments/attend/attention_picture.h"

#include <fmt/format.h>

#include "framework/text_util.h"

namespace qkv::app {

std::string layer_name(const models::AttentionTrace& trace) {
  return fmt::format("layer {} of {}", trace.layer + 1, trace.layers);
}

render::HeatmapSpec attention_heatmap(const models::AttentionTrace& trace, const std::string& mode,
                                      const std::string& checkpoint) {
  render::HeatmapSpec spec;
  spec.title = fmt::format("{}\n-> {}\n{} attention · {} · {}", join(trace.english, " "), join(trace.hindi, " "), mode,
                           layer_name(trace), checkpoint);
  spec.row_labels = trace.labels;
  spec.col_labels = trace.labels;
  spec.values = trace.weights;
  spec.masked = trace.masked;
  spec.vmin = 0;
  spec.vmax = 1;
  spec.colorbar_label = "attention weight (rows: queries, columns: keys)";
  return spec;
}

}  // namespace qkv::app
