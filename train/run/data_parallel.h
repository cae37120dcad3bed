// train/run/data_parallel.h — what a run does on several ranks (qkv train --data-parallel): each
// rank's device, the flags and data every rank must share, each rank's slice of a batch, the step's
// one all-reduce and validation split across the ranks.
#pragma once

#include <cstdint>
#include <vector>

#include "data/dataset.h"
#include "framework/tensor.h"
#include "models/translator.h"
#include "train/run/training_run.h"

namespace qkv::app {

// The device a run trains on: --device, and under data-parallel CUDA, rank r's GPU r mod the count.
Device run_device(const TrainOptions& o, dist::ProcessGroup* group);

// Every rank must run the same flags on the same data: each sends its options, dataset and model
// config; a rank that differs from rank 0 is named, on every rank, before anything is written.
void check_ranks_agree(dist::ProcessGroup& group, const TrainOptions& o, const data::Dataset& ds,
                       const models::TranslatorConfig& config);

// The batch this rank trains on for the global batch idx: all of it, or (data-parallel) the
// rank's contiguous slice, whose loss is weighted by its share of the global batch's target
// tokens so that the summed gradient is the whole batch's. An empty slice is a batch without rows.
// With randomized positions each row is keyed by the seed, the step and its pair
// (data::Batch::row_keys), so any number of ranks, and a resumed run, draw what one process draws.
struct RankBatch {
  data::Batch batch;
  int64_t batch_tokens = 0;  // data-parallel: the global batch's target tokens
  double share = 1.0;
};
RankBatch rank_batch(const TrainingRun& run, std::vector<size_t> idx, int64_t step);

// Data-parallel: one all-reduce per step carries every gradient, this rank's loss share (the loss
// becomes the global batch's) and whether this rank saw a signal. Returns how many ranks saw one.
int all_reduce_step(const TrainingRun& run, Tensor& loss);

// The run's validation split across its ranks (rank r takes the r-th contiguous slice), its sums reduced.
EvalResult evaluate_across_ranks(TrainingRun& run);

}  // namespace qkv::app
