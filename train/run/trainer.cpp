// train/run/trainer.cpp — a training run from its opened TrainingRun (training_run.cpp): the output
// folder, the AdamW loop, per-epoch validation, best-epoch checkpointing and metrics.csv. Progress,
// data-parallel pieces and the step's guards are in progress.cpp, data_parallel.cpp and step_guards.h.
#include "train/run/trainer.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <memory>
#include <utility>

#include "framework/backend.h"
#include "framework/distributed.h"
#include "framework/ops.h"
#include "framework/optim.h"
#include "framework/safetensors.h"
#include "models/train_step.h"
#include "train/run/data_parallel.h"
#include "train/run/evaluate.h"
#include "train/run/progress.h"
#include "train/run/run_config.h"
#include "train/run/run_state.h"
#include "train/run/step_guards.h"

namespace qkv::app {

namespace fs = std::filesystem;

std::atomic<int> interrupt_signal{0};

void install_interrupt_handlers() {
  struct sigaction action {};
  action.sa_handler = [](int sig) { interrupt_signal.store(sig); };
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

// ---- the loop ----

// The state of a fresh epoch (its generator state first, so a resumed run replays its shuffle).
static void start_epoch(RunState& st, int64_t epoch, const Generator& gen) {
  st.epoch = epoch;
  st.position = 0;
  st.loss_sum = Tensor();
  st.loss_count = 0;
  st.epoch_rng = gen.state();
}

struct StepPlan {
  int64_t total_steps = 0, warmup_steps = 0;
  std::ofstream* step_losses = nullptr;  // testing: each step's global loss
};

// One step on the global batch order[begin, begin + batch): this rank's slice, the scheduled
// learning rate, the all-reduce, the non-finite check and the update, then the run's counters,
// the periodic save and the interrupt check. Returns the step's loss (on the device).
static Tensor train_one_batch(TrainingRun& run, const StepPlan& plan, int64_t epoch, const std::vector<size_t>& order,
                              size_t begin, NonFiniteCheck& nonfinite, StateSaver& saver, const TrainResult& result) {
  const TrainOptions& o = run.o;
  RunState& st = run.st;
  int64_t& step = st.step;
  const size_t end = std::min(order.size(), begin + o.batch);
  const RankBatch mine = rank_batch(run, std::vector<size_t>(order.begin() + begin, order.begin() + end), step);
  const data::Batch& batch = mine.batch;
  // linear warm-up over the first epoch (at most a tenth of the run), then cosine decay to 10% of --lr
  models::StepOptions step_options;
  step_options.lr = optim::scheduled_learning_rate(step, plan.total_steps, plan.warmup_steps, o.lr, o.schedule);
  step_options.clip = o.clip;
  step_options.label_smoothing = o.label_smoothing;
  if (run.group) step_options.loss_scale = mine.share;
  step_options.after_backward = [&](Tensor& loss) {
    if (run.group) saver.set_ranks_interrupted(all_reduce_step(run, loss));
    if (plan.step_losses) *plan.step_losses << fmt::format("{:.17g}\n", loss.item());
    // steps.csv: the (global) loss and the learning rate every few steps, and the last step's
    if ((step + 1) % steps_logged_every(plan.total_steps) == 0 || step + 1 == plan.total_steps) {
      if (st.steps_csv.empty()) st.steps_csv = kStepsCsvHeader;
      st.steps_csv += fmt::format("{},{},{:.6f},{:.6g}\n", step + 1, epoch, loss.item(), *step_options.lr);
    }
  };
  step_options.before_update = [&](const Tensor& loss, const Tensor& grad_norm) {
    nonfinite.add_step(loss, grad_norm, epoch, step + 1, end >= order.size(), run, result);
  };
  // Data-parallel ranks draw their dropout masks from a generator keyed by the seed, the step and the
  // rank: the saved state holds one rank's generator, and a resumed run must draw what each rank drew.
  if (run.group && o.dropout > 0)
    run.model.dropout_generator() =
        Generator(Generator::mixed_seed(Generator::mixed_seed(o.seed + 1, step), run.group->rank()));
  const Tensor loss = models::train_step(run.model, run.optimizer, run.trained, batch, step_options).loss;
  if (run.average) run.average->update(run.optimizer.steps_taken());
  ++step;
  st.tokens_seen += run.group ? mine.batch_tokens : batch.target_tokens;
  st.loss_sum = st.loss_sum.defined() ? add(st.loss_sum, loss.detach()) : loss.detach();  // read once per epoch
  ++st.loss_count;
  st.position = static_cast<int64_t>(end);
  saver.after_step(epoch, order.size());
  return loss;
}

// After an epoch's steps: validation (across the ranks), the best checkpoint (by valid exact match,
// ties broken by valid loss), metrics.csv, and the state from which the next epoch would resume.
static void finish_epoch(TrainingRun& run, int64_t epoch, TrainResult& result, StateSaver& saver,
                         const TrainingProgress& progress) {
  RunState& st = run.st;
  EpochRecord rec;
  rec.epoch = epoch;
  rec.train_loss = st.loss_sum.item() / std::max<int64_t>(st.loss_count, 1);
  if (progress.validating) progress.validating(epoch);
  {
    const optim::WeightAverage::SwappedIn averaged(run.average);  // --ema: the averaged weights are validated
    rec.valid = run.group ? evaluate_across_ranks(run) : evaluate(run.model, run.ds.valid, run.english, run.hindi);
  }
  if (!std::isfinite(rec.valid.loss) || !std::isfinite(rec.train_loss))
    throw std::runtime_error(fmt::format(
        "training stopped: the {} loss was {} after epoch {}{}", std::isfinite(rec.train_loss) ? "valid" : "train",
        std::isfinite(rec.train_loss) ? rec.valid.loss : rec.train_loss, epoch, kept_note(result)));
  rec.seconds = st.train_seconds;
  result.history.push_back(rec);
  const bool better = rec.valid.exact_match > st.best_exact ||
                      (rec.valid.exact_match == st.best_exact && rec.valid.loss < st.best_loss);
  if (better) {
    st.best_exact = rec.valid.exact_match;
    st.best_loss = rec.valid.loss;
    st.best_epoch = result.best_epoch = epoch;
  }
  st.csv += fmt::format("{},{:.6f},{:.6f},{:.6f},{:.6f},{:.3f}\n", epoch, rec.train_loss, rec.valid.loss,
                        rec.valid.token_accuracy, rec.valid.exact_match, rec.seconds);
  st.history = result.history;
  // The state first (the next epoch starts from it; after the last, epochs + 1), then the model
  // and metrics: a run killed between them resumes from the state, which writes them again
  // (write_finished_epoch_outputs).
  start_epoch(st, epoch + 1, run.gen);
  saver.save();
  if (run.writer()) write_epoch_outputs(run, better);
  if (progress.epoch) progress.epoch(rec, better);
}

static TrainResult run_training(TrainingRun& run, const TrainingProgress& progress) {
  const TrainOptions& o = run.o;
  RunState& st = run.st;
  TrainResult result{.history = st.history, .best_epoch = st.best_epoch, .checkpoint = run.folder.model_path()};
  StepPlan plan;
  const int64_t steps_per_epoch = (static_cast<int64_t>(run.ds.train.size()) + o.batch - 1) / o.batch;
  plan.total_steps = steps_per_epoch * o.epochs;
  plan.warmup_steps = optim::default_warmup_steps(steps_per_epoch, plan.total_steps);
  if (progress.start) progress.start(plan.total_steps);
  const auto start = Clock::now();
  NonFiniteCheck nonfinite(st.step);
  if (st.csv.empty()) st.csv = kMetricsCsvHeader;
  StateSaver saver(run);
  std::unique_ptr<std::ofstream> step_losses;
  if (run.writer() && !o.step_losses.empty()) step_losses = std::make_unique<std::ofstream>(o.step_losses);
  plan.step_losses = step_losses.get();
  for (int64_t epoch = st.epoch; epoch <= o.epochs; ++epoch) {
    run.model.train(true);
    const auto epoch_start = Clock::now();
    if (epoch != st.epoch || st.epoch_rng.empty()) start_epoch(st, epoch, run.gen);  // a resumed epoch restored its own
    const std::vector<size_t> order = data::shuffled_indices(run.ds.train.size(), run.gen);
    for (size_t begin = static_cast<size_t>(st.position); begin < order.size(); begin += o.batch) {
      const Tensor loss = train_one_batch(run, plan, epoch, order, begin, nonfinite, saver, result);
      if (progress.step) progress.step(epoch, loss, st.train_seconds + seconds_since(epoch_start));
    }
    st.train_seconds += seconds_since(epoch_start);
    finish_epoch(run, epoch, result, saver, progress);
  }
  result.seconds = seconds_since(start);
  result.tokens_per_second = st.tokens_seen / std::max(st.train_seconds, 1e-9);
  if (!run.writer()) return result;
  if (result.best_epoch < 1 || !fs::exists(result.checkpoint))
    throw std::runtime_error(fmt::format("{}: the run ended without a model (best epoch {}); start over with --force",
                                         o.out_dir, result.best_epoch));
  write_loss_plot(run.folder.path(RunFolder::kPlot), result.history, st.steps_csv,
                  static_cast<double>(plan.total_steps) / o.epochs,
                  fmt::format("{} attention", models::attention_mode_name(o.attention)));
  run.folder.remove_state();  // the run is complete, the last of its files written: nothing to resume
  if (progress.finish) progress.finish(result);
  return result;
}

// --resume of a run that stopped after its last file: its model, metrics and plot are all there.
static TrainResult completed_run(const TrainOptions& o) {
  if (!o.quiet)
    fmt::print("{}: the run is complete (its model, metrics and plot are there); nothing to resume\n", o.out_dir);
  return {.history = {}, .checkpoint = RunFolder(o.out_dir).model_path()};
}

std::unique_ptr<TrainingRun> TrainingRun::open(const TrainOptions& requested, dist::ProcessGroup* group) {
  // --resume takes every setting from the saved state; --force starts over; otherwise an --out
  // that holds a run is refused (a rerun used to overwrite the best model of the last one).
  TrainOptions o = requested;
  std::unique_ptr<SafeTensorsFile> saved = open_saved_state(requested, o);
  check_option_bounds(o);                           // the command line's checks, for options built in code
  if (group && group->rank() != 0) o.quiet = true;  // rank 0 alone writes files and progress
  const Device device = run_device(o, group);
  if (o.threads > 0) set_cpu_threads(o.threads);
  data::Dataset ds = data::load_dataset(o.data_dir);
  if (o.reverse) data::swap_languages(ds);
  if (o.right_to_left) data::turn_targets(ds);
  if (saved) {  // the saved config against this dataset's, before a model is sized from it
    const auto [english, hindi] = train_vocabularies(ds);
    check_saved_config(*saved, RunFolder(o.out_dir).state_path(), translator_config(o, ds, english, hindi), o.data_dir);
  }
  auto run = std::make_unique<TrainingRun>(o, std::move(ds), device, group);
  if (saved) restore_state(*saved, run->folder.state_path(), *run);    // checked against this dataset and model
  if (group) check_ranks_agree(*group, run->o, run->ds, run->config);  // after every input check, before any output
  return run;
}

TrainResult train_translator(const TrainOptions& requested) {
  // Data-parallel: join the ranks first (MPI), so that every later error can stop them all.
  dist::ProcessGroup* group = requested.data_parallel ? &dist::ProcessGroup::world() : nullptr;
  if (resumed_run_is_complete(requested)) return completed_run(requested);  // nothing is left to do
  const std::unique_ptr<TrainingRun> opened = TrainingRun::open(requested, group);
  TrainingRun& run = *opened;
  const TrainOptions& o = run.o;
  RunState& st = run.st;
  if (!run.writer()) return run_training(run, console_progress(run));
  const bool created_out = !fs::exists(o.out_dir);
  fs::create_directories(o.out_dir);
  run.folder.remove_stale_temp_files();
  if (o.force && !o.resume)
    run.folder.remove_run_files();  // start over: nothing of the old run may be mistaken for this one
  try {
    if (o.resume) {
      write_finished_epoch_outputs(run);  // a run killed at an epoch's end
    } else {  // the first save, before any training: a run killed from here on can be resumed
      st.epoch_rng = run.gen.state();
      st.dropout_rng = run.model.dropout_generator().state();
      st.csv = kMetricsCsvHeader;
      save_state(run);
    }
    return run_training(run, console_progress(run));
  } catch (...) {
    // A run that stops before its first checkpoint (or a saved state) leaves no directory it made.
    std::error_code ec;
    if (created_out && !run.folder.has(RunFolder::kModel) && (!run.folder.has(RunFolder::kState) || st.saved_step == 0))
      fs::remove_all(o.out_dir, ec);
    rethrow_noting_full_disk(st, o.out_dir);
  }
}

}  // namespace qkv::app
