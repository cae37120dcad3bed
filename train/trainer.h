// train/trainer.h — training and evaluation of the translator, shared by `qkv train`,
// `qkv eval` and `qkv demo`. Progress goes to stdout; files are written atomically.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "data/dataset.h"
#include "models/translator.h"

namespace qkv::app {

struct TrainOptions {
  std::string data_dir = "data/idioms";
  std::string attention = "learned";
  // The defaults were chosen by measurement on data/idioms (RESULTS.md, "How the defaults were chosen").
  int64_t layers = 5;  // stacked attention + feed-forward layers (the one default for train and demo)
  int64_t d_model = 64, d_k = 64, d_ff = 128;
  std::string activation = "relu";
  int64_t epochs = 3, batch = 64;
  double lr = 5e-3, weight_decay = 0.01, clip = 1.0, dropout = 0.0;
  uint64_t seed = 1;
  int threads = 0;  // CPU threads; 0: keep the count set before (apply_threads: QKV_THREADS, else one per core)
  // cosine: a linear warm-up over one epoch or a tenth of the run, whichever is shorter, then cosine
  // decay to 10% (optim::scheduled_learning_rate and default_warmup_steps, framework/optim.cpp) | constant
  std::string schedule = "cosine";
  std::string out_dir = "runs/learned";
  std::string device = "cpu";
  bool freeze_embeddings = false;  // keep token embeddings at their random start
  bool quiet = false;  // no per-step progress (used by demo)
  // An --out that already holds a run is refused unless the run is resumed or force is set.
  bool force = false;   // start over in it (its model, state, metrics and plot are replaced)
  bool resume = false;  // continue the run saved in out_dir (its settings come from the saved state)
  int64_t stop_after_steps = 0;  // testing: behave as if interrupted after this many steps (0: never)
  std::string dtype = "float32";  // float32 | float64 (the data-parallel exactness test trains in float64)
  // Data-parallel (under mpirun): every rank trains the same model on its slice of each global
  // batch and the gradients are summed with one all-reduce per step; rank 0 alone writes files.
  bool data_parallel = false;
  std::string step_losses;  // testing: rank 0 writes each step's global loss here, one per line
};

// Thrown when a run is interrupted (SIGINT, SIGTERM or stop_after_steps) after its state was
// saved; the program exits with status 130.
struct Interrupted : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Installs SIGINT and SIGTERM handlers that let the current training step finish, then save.
void install_interrupt_handlers();

struct EvalResult {
  double loss = 0, token_accuracy = 0, exact_match = 0;
  int64_t sentences = 0, tokens = 0;
  double decode_seconds = 0;  // wall time of the greedy decoding alone
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

TrainResult train_translator(const TrainOptions& options);

// Teacher-forced loss and token accuracy, and greedy exact-match, over a split. Words unknown to
// the vocabularies become <unk>; an unknown target word never counts as correctly predicted.
// A sentence longer than the model's layout throws naming its file:line.
EvalResult evaluate(models::Translator& model, const std::vector<data::SentencePair>& pairs,
                    const data::Vocab& english, const data::Vocab& hindi, int64_t batch_size = 256);

}  // namespace qkv::app
