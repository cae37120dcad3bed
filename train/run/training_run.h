// train/run/training_run.h — what a training run is made of, below the trainer: its results (an
// evaluation, an epoch's record, the run's result), where it is (RunState, what a saved state holds),
// everything one run works on and owns, opened by itself (TrainingRun), and the folder that owns its files.
#pragma once

#include <chrono>
#include <csignal>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "data/dataset.h"
#include "framework/optim.h"
#include "framework/random.h"
#include "framework/tensor.h"
#include "models/translator.h"
#include "train/run/train_options.h"

namespace qkv::dist {
class ProcessGroup;
}

namespace qkv::app {

// Wall-clock seconds since `start` (training and decoding times).
using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Thrown when a run is interrupted (SIGINT, SIGTERM or stop_after_steps) after its state was
// saved; the program exits with status 130.
struct Interrupted : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// How an Interrupted message names the signal: " (SIGINT)", " (SIGTERM)", or "" for any other.
inline const char* signal_note(int sig) { return sig == SIGINT ? " (SIGINT)" : sig == SIGTERM ? " (SIGTERM)" : ""; }

struct EvalResult {
  double loss = 0, token_accuracy = 0, exact_match = 0;
  int64_t sentences = 0, tokens = 0;  // evaluated
  int64_t skipped = 0;  // sentences longer than the layout of a model tied to it (absolute positions), not evaluated
  double decode_seconds = 0;  // wall time of the greedy decoding alone
  // Of the greedy translations that missed: shorter than the reference (stopped early) or longer
  // (stopped late); and how many were cut at the decode limit without <eos> (missed or not).
  int64_t stopped_early = 0, stopped_late = 0, cut_at_limit = 0;
  int64_t unreachable = 0;  // references holding a Hindi word the model's vocabulary lacks: no translation equals them
};

struct EpochRecord {
  int64_t epoch = 0;
  double train_loss = 0, seconds = 0;
  EvalResult valid;
};

struct TrainResult {
  std::vector<EpochRecord> history;
  int64_t best_epoch = 0;
  double seconds = 0, tokens_per_second = 0;
  std::string checkpoint;  // DIR/model.safetensors
};

// Where a run is: the trainer's loop reads and advances it; save_state writes it.
struct RunState {
  int64_t epoch = 1, position = 0, step = 0, best_epoch = 0, loss_count = 0, tokens_seen = 0;
  double best_exact = -1, best_loss = 0, train_seconds = 0;
  std::string epoch_rng, dropout_rng, csv;
  std::string steps_csv;  // steps.csv so far: the train loss and learning rate every few steps
  std::vector<EpochRecord> history;
  Tensor loss_sum;
  int64_t saved_step = -1;  // the step of the state last written to disk (-1: none yet)
};

// The folder a training run owns (--out): the names of the files it writes, named here once (the end of an
// epoch's outputs, written by the loop and again by --resume of a run killed between them, are
// write_epoch_outputs's, run_state.h).
class RunFolder {
 public:
  explicit RunFolder(std::string dir) : dir_(std::move(dir)) {}

  // The files a run writes, in the order of a finished run: the best model, the resumable state,
  // the metrics per epoch, the loss every few steps and the plot.
  static constexpr const char* kModel = "model.safetensors";
  static constexpr const char* kState = "train_state.safetensors";
  static constexpr const char* kMetrics = "metrics.csv";
  static constexpr const char* kSteps = "steps.csv";
  static constexpr const char* kPlot = "loss.png";
  static const std::vector<const char*>& file_names();

  std::string path(const char* name) const;  // DIR/name
  std::string model_path() const { return path(kModel); }
  std::string state_path() const { return path(kState); }
  bool has(const char* name) const;
  // A finished run: its state, written before the last model, metrics and plot and removed after
  // them, is gone and everything else is there.
  bool holds_finished_run() const;

  // Every file of a run (--force starts over), the temp files of killed runs, and the state (after a
  // run's last outputs: nothing is left to resume).
  void remove_run_files() const;
  void remove_stale_temp_files() const;
  void remove_state() const;

 private:
  std::string dir_;
};

// Creates the folder `out` (and its parents) or throws "--out <out>: cannot create that folder
// (<why>)": commands call it before their work, so that an --out that cannot be a folder fails at once.
void create_out_folder(const std::string& out);

// Everything one run works on, and what it owns: the options, the dataset and its vocabularies, the
// model, the optimiser, the generators, where the run is and the folder. open() makes the run a
// command line asks for; the loop (run_training), the saved state (save_state, restore_state) and
// the folder's writes work on it.
class TrainingRun {
 public:
  // The run `requested` asks for, opened: its options (with --resume the saved state's) checked, its
  // device, dataset and model made, and with --resume everything the interrupted run had restored,
  // checked against them. Everything that can fail on input happens here, before the output folder
  // is touched. `group`: the data-parallel ranks, or null.
  static std::unique_ptr<TrainingRun> open(const TrainOptions& requested, dist::ProcessGroup* group);
  // A fresh run of options `options` (checked) on `dataset`: its vocabularies, config, model (its
  // size checked before it is made) and optimiser; restore_state can then put a saved state in it.
  TrainingRun(const TrainOptions& options, data::Dataset dataset, Device device, dist::ProcessGroup* group);
  TrainingRun(const TrainingRun&) = delete;
  TrainingRun& operator=(const TrainingRun&) = delete;

  const TrainOptions o;
  const data::Dataset ds;

 private:  // declared before the members below, which are made from them (members are made in this order)
  std::pair<data::Vocab, data::Vocab> vocabularies_;  // train's English and Hindi words
  std::optional<optim::WeightAverage> average_;

 public:
  const data::Vocab& english = vocabularies_.first;
  const data::Vocab& hindi = vocabularies_.second;
  const models::TranslatorConfig config;
  const Device device;
  Generator gen;  // the epochs' shuffles (the model's dropout generator is its own)
  models::Translator model;
  const std::vector<Tensor> trained;  // the parameters the optimiser updates (frozen embeddings left out)
  optim::AdamW optimizer;
  RunState st;                              // where the run is: saved, and restored by --resume
  dist::ProcessGroup* const group;          // data-parallel ranks, or null
  RunFolder folder;                         // o.out_dir and the files the run owns in it
  optim::WeightAverage* average = nullptr;  // --ema's averaged weights (saved; validated and written), or null
  bool writer() const;                      // rank 0 alone writes files
};

}  // namespace qkv::app
