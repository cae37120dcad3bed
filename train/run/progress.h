// train/run/progress.h — what a training run reports as it goes: the callbacks run_training calls,
// the live line and epoch lines of `qkv train`, and loss.png.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "framework/tensor.h"
#include "train/run/training_run.h"

namespace qkv::app {

// What run_training reports as it goes (as ggml_opt_epoch's callback); an empty member is skipped.
struct TrainingProgress {
  std::function<void(int64_t total_steps)> start;
  // After each step: the step's loss (on the device; reading it back costs a synchronisation) and
  // the training seconds so far. The step count and tokens seen are in the run's state.
  std::function<void(int64_t epoch, const Tensor& loss, double train_seconds)> step;
  std::function<void(int64_t epoch)> validating;                          // before an epoch's validation
  std::function<void(const EpochRecord& record, bool saved_best)> epoch;  // after its validation
  std::function<void(const TrainResult& result)> finish;                  // rank 0, after the last epoch
};

// The live line and the per-epoch lines of `qkv train` on stdout; nothing when o.quiet.
TrainingProgress console_progress(const TrainingRun& run);

// loss.png: the train loss every few steps (steps.csv) and per epoch, the valid loss per epoch,
// on a log scale against epochs; beside it, the learning rate the schedule gave each logged step.
void write_loss_plot(const std::string& path, const std::vector<EpochRecord>& history, const std::string& steps_csv,
                     double steps_per_epoch, const std::string& title);

}  // namespace qkv::app
