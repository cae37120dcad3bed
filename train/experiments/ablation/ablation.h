// train/experiments/ablation/ablation.h — `qkv ablate`'s options and run, and what it shares with the demo:
// a cell (one model: attention mode, blocks, embeddings, F) trained and scored on the report splits,
// a cell's result as a point of the ablation plot, the plot itself, and the reader of an
// ablation.tsv (the demo draws a recorded grid).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "models/block.h"
#include "train/run/train_options.h"
#include "tools/render/render.h"

namespace qkv::app {

// One model of the grid or of the demo. The control is static attention with its feed-forward
// widened until the model has as many parameters as the learned one (attention's W_q, W_k, W_v,
// W_o go to fc1/fc2).
struct Cell {
  models::AttentionMode mode = models::AttentionMode::Learned;
  bool frozen = false, control = false;  // frozen token embeddings; static with F widened to learned's parameters
  int64_t blocks = 1, d_ff = 0;
  std::string mode_name() const { return models::attention_mode_name(mode); }
  std::string name() const;    // learned-frozen-L2: its folder in ablate's cells/
  std::string series() const;  // the plot's line this cell belongs to
};

// A cell's point of the ablation plot (its d_ff unread).
struct AblationPoint : Cell {
  double generalisation_mean = 0;  // mean greedy exact match (%) over the generalisation splits
};

// A trained cell's checkpoint and scores.
struct ScoredCell {
  std::string checkpoint;
  double train_seconds = 0;
  int64_t parameters = 0, attention_parameters = 0;
  std::vector<double> exact_match;  // greedy exact match (%) on each report split
  double test() const { return exact_match.front(); }
  double generalisation_mean() const;  // over the report splits after test; 0 when there are none
};

// The splits a cell is scored on: test, then the generalisation splits the dataset has.
std::vector<std::string> report_split_names(const data::Dataset& ds);
// The run of cell c: `base` with the cell's attention, blocks, F and embeddings, quiet, into out_dir.
TrainOptions cell_options(const Cell& c, const TrainOptions& base, const std::string& out_dir);
// Trains with t (cell_options) and scores the model on each of report_splits of ds.
ScoredCell train_and_score(const TrainOptions& t, const data::Dataset& ds,
                           const std::vector<std::string>& report_splits);

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
