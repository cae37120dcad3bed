// train/experiments/ablation/ablation.h — `qkv ablate`'s options and run, and what it shares with the demo:
// one cell's result as a point of the ablation plot, the plot itself, and the reader of an
// ablation.tsv (the demo draws a recorded grid).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/block.h"
#include "train/run/train_options.h"
#include "tools/render/render.h"

namespace qkv::app {

struct AblationPoint {
  models::AttentionMode mode = models::AttentionMode::Learned;
  bool frozen = false, control = false;  // frozen token embeddings; static with F widened to learned's parameters
  int64_t blocks = 1;
  double generalisation_mean = 0;  // mean greedy exact match (%) over the generalisation splits
  std::string series() const;      // the plot's line this point belongs to
};

// Generalisation against blocks: one line per series, frozen embeddings dashed.
render::LinePlotSpec ablation_plot(const std::vector<AblationPoint>& points, const std::string& title);
// The cells of an ablation.tsv (columns attention, token_embeddings, blocks, generalisation_mean;
// others ignored; lines starting with # skipped). Errors name path:line.
std::vector<AblationPoint> parse_ablation_tsv(const std::string& text, const std::string& path);

struct AblateOptions {
  // every cell's run: data, epochs, widths, seed and threads from the command line, the rest
  // `qkv train`'s defaults; each cell overrides its attention, blocks, F and embeddings
  TrainOptions base;
  std::string out = "runs/ablate";
  std::vector<int64_t> blocks = {1, 2, 3, 4, 5};
  std::vector<models::AttentionMode> modes = {models::AttentionMode::Learned, models::AttentionMode::Static,
                                              models::AttentionMode::None};
  bool no_frozen = false;          // skip the frozen-embedding cells
  bool no_control = false;         // skip the equal-parameter control
  std::vector<std::string> rerun;  // cells to train again although their results are cached
};

// Trains (or takes from the cache) every cell of the grid o names and writes ablation.tsv, .json
// and the plot into o.out.
void run_ablate(const AblateOptions& o);

}  // namespace qkv::app
