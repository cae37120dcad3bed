// train/run/run_state.h — a resumable run: what DIR/train_state.safetensors holds (current weights,
// AdamW moments, generators, position, best so far, metrics so far), and how it is saved and restored.
#pragma once

#include <algorithm>
#include <memory>
#include <string>

#include "framework/optim.h"
#include "framework/random.h"
#include "framework/safetensors.h"
#include "models/translator.h"
#include "train/run/training_run.h"

namespace qkv::app {

inline constexpr const char* kMetricsCsvHeader =
    "epoch,train_loss,valid_loss,valid_token_accuracy,valid_exact_match,seconds\n";

// steps.csv's first line; a line is written every steps_logged_every(total steps) steps.
inline constexpr const char* kStepsCsvHeader = "step,epoch,train_loss,learning_rate\n";
// About 100 points per run, and the last step's.
inline int64_t steps_logged_every(int64_t total_steps) { return std::max<int64_t>(1, total_steps / 100); }

// The options of a run as JSON (numbers as exact hex floats), as a state saves them; the ranks of
// a data-parallel run compare them.
std::string options_json(const TrainOptions& o);

// Opens the saved state of --resume (and replaces `o` by the saved options, keeping this
// invocation's out_dir, threads, quiet and flags), or checks that --out holds no run; returns
// null when not resuming. Either way --out must be a directory or a new name, and the files a
// run writes in it regular files or new names. A refusal names the command that works.
std::unique_ptr<SafeTensorsFile> open_saved_state(const TrainOptions& requested, TrainOptions& o);

// A read state's options (its format checked): open_saved_state's step after reading the file,
// which the fuzz harness (tests/fuzz/fuzz_train_state.cpp) runs on bytes.
TrainOptions saved_options(const SafeTensorsFile& saved, const std::string& saved_path, const TrainOptions& requested);

// --resume of a run that already finished (its state removed after its last outputs): nothing to do.
bool resumed_run_is_complete(const TrainOptions& requested);

// Writes the state atomically and records st.saved_step.
void save_state(TrainingRun& run);

// The saved run's model config must be the one its options give on this dataset (checked before
// a model is built from the options, and again by restore_state).
void check_saved_config(const SafeTensorsFile& saved, const std::string& saved_path,
                        const models::TranslatorConfig& config, const std::string& data_dir);

// Puts everything the interrupted run had back into the run's model, optimiser, generators and
// state, checked against its dataset and model (every problem throws naming saved_path): every
// field for type, range, finiteness and agreement with the others, and exactly the tensors a run
// saves at that step, before anything is copied.
void restore_state(const SafeTensorsFile& saved, const std::string& saved_path, TrainingRun& run);

// The end of an epoch: the model when the epoch is the best so far, then metrics.csv and (once it
// has lines) steps.csv, each atomically; with --ema, from the averaged weights.
void write_epoch_outputs(const TrainingRun& run, bool best);

// A state saved at the end of an epoch is written before that epoch's model and metrics.csv (a run
// killed in between resumes from it): this writes them, from the restored weights, as the run
// would have. Nothing for a state saved within an epoch.
void write_finished_epoch_outputs(const TrainingRun& run);

// Rethrows the exception in flight; one that says the disk is full (ENOSPC) gets what is left of
// the run: "the run is saved at step N: ... qkv train --resume --out DIR", or that nothing is.
[[noreturn]] void rethrow_noting_full_disk(const RunState& st, const std::string& dir);

}  // namespace qkv::app
