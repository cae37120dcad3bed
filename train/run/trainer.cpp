// train/run/trainer.cpp — the AdamW training loop with live progress, per-epoch validation, best-
// epoch checkpointing and metrics.csv; and the evaluation used by every command.
#include "train/run/trainer.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <memory>
#include <optional>
#include <utility>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "framework/autograd.h"
#include "framework/backend.h"
#include "framework/distributed.h"
#include "framework/file_util.h"
#ifdef QKV_WITH_CUDA
#include "framework/cuda/cuda_info.h"
#endif
#include "framework/ops.h"
#include "framework/optim.h"
#include "framework/safetensors.h"
#include "models/memory_budget.h"
#include "models/train_step.h"
#include "models/translator_io.h"
#include "train/run/run_config.h"
#include "train/run/run_state.h"
#include "tools/render/render.h"

namespace qkv::app {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

static double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

static std::string format_eta(double seconds) {
  const int s = static_cast<int>(seconds + 0.5);
  return s >= 60 ? fmt::format("{}m{:02d}s", s / 60, s % 60) : fmt::format("{}s", s);
}

// loss.png: the train loss every few steps (steps.csv) and per epoch, the valid loss per epoch,
// on a log scale against epochs; beside it, the learning rate the schedule gave each logged step.
static void write_loss_plot(const std::string& path, const std::vector<EpochRecord>& history,
                            const std::string& steps_csv, double steps_per_epoch, const std::string& title) {
  render::LinePlotSpec spec;
  spec.title = title + ": loss";
  spec.x_label = "epoch";
  spec.y_label = "cross-entropy loss (log scale)";
  spec.log_y = true;
  render::Series steps{"train loss, every few steps", {}, {}, {174, 199, 232}};
  render::Series train{"train loss, epoch mean (over the epoch)", {}, {}, {31, 119, 180}};
  render::Series valid{"valid loss", {}, {}, {255, 127, 14}};
  render::LinePlotSpec rate;
  rate.title = title + ": learning rate";
  rate.x_label = "epoch";
  rate.y_label = "learning rate";
  render::Series lr{"learning rate", {}, {}, {44, 160, 44}};
  // steps.csv lines: step,epoch,loss,learning_rate (after the header)
  for (size_t begin = steps_csv.find('\n'); begin != std::string::npos && begin + 1 < steps_csv.size();) {
    const size_t end = steps_csv.find('\n', begin + 1);
    long long step = 0, epoch = 0;
    double loss = 0, learning_rate = 0;
    if (std::sscanf(steps_csv.c_str() + begin + 1, "%lld,%lld,%lf,%lf", &step, &epoch, &loss, &learning_rate) == 4) {
      steps.x.push_back(static_cast<double>(step) / steps_per_epoch);
      steps.y.push_back(loss);
      lr.x.push_back(static_cast<double>(step) / steps_per_epoch);
      lr.y.push_back(learning_rate);
    }
    begin = end;
  }
  for (const auto& e : history) {  // the mean over an epoch is a level across that epoch, not a point
    train.x.insert(train.x.end(), {static_cast<double>(e.epoch) - 1, static_cast<double>(e.epoch)});
    train.y.insert(train.y.end(), {e.train_loss, e.train_loss});
    valid.x.push_back(static_cast<double>(e.epoch));
    valid.y.push_back(e.valid.loss);
  }
  valid.markers = true;
  steps.markers = steps.x.size() < 2;  // a run of one logged step still shows its point
  lr.markers = lr.x.size() < 2;
  spec.series = {steps, train, valid};
  if (lr.x.empty()) {
    render::write_png(render::render_line_plot(spec), path);
    return;
  }
  rate.series = {lr};
  rate.width = 560;
  render::write_png(render::hstack({render::render_line_plot(spec), render::render_line_plot(rate)}, 16), path);
}

constexpr int64_t kStateEvery = 200;  // steps between saves of train_state.safetensors (run_state.h)

std::atomic<int> interrupt_signal{0};

void install_interrupt_handlers() {
  struct sigaction action {};
  action.sa_handler = [](int sig) { interrupt_signal.store(sig); };
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

// Validation split across the ranks (rank r takes the r-th contiguous slice), its sums reduced.
static EvalResult evaluate_across_ranks(dist::ProcessGroup& group, models::Translator& model,
                                        const std::vector<data::SentencePair>& pairs, const data::Vocab& english,
                                        const data::Vocab& hindi) {
  const size_t n = pairs.size(), r = static_cast<size_t>(group.rank()), N = static_cast<size_t>(group.size());
  const std::vector<data::SentencePair> mine(pairs.begin() + n * r / N, pairs.begin() + n * (r + 1) / N);
  const EvalResult local = evaluate(model, mine, english, hindi);
  Tensor sums = Tensor::from_vector(
      {local.loss * local.tokens, local.token_accuracy * local.tokens, local.exact_match * local.sentences,
       static_cast<double>(local.sentences), static_cast<double>(local.tokens), static_cast<double>(local.skipped)},
      {6}, DType::F64);
  group.all_reduce_sum(sums);
  const std::vector<double> s = sums.to_vector();
  EvalResult all;
  all.sentences = static_cast<int64_t>(std::llround(s[3]));
  all.tokens = static_cast<int64_t>(std::llround(s[4]));
  all.skipped = static_cast<int64_t>(std::llround(s[5]));
  all.loss = all.tokens ? s[0] / s[4] : 0;
  all.token_accuracy = all.tokens ? s[1] / s[4] : 0;
  all.exact_match = all.sentences ? std::round(s[2]) / s[3] : 0;
  all.decode_seconds = local.decode_seconds;
  return all;
}

// FNV-1a over the training and validation pairs: ranks compare it to find a different dataset.
static std::string dataset_fingerprint(const data::Dataset& ds) {
  uint64_t h = 1469598103934665603ull;
  const auto mix = [&](const std::string& text) {
    for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
    h = (h ^ 0xff) * 1099511628211ull;  // a separator no UTF-8 text holds
  };
  for (const auto* split : {&ds.train, &ds.valid})
    for (const auto& p : *split) {
      for (const auto& w : p.english) mix(w);
      mix("\t");
      for (const auto& w : p.hindi) mix(w);
    }
  return fmt::format("{} train and {} valid pairs, hash {:016x}", ds.train.size(), ds.valid.size(), h);
}

// Every rank must run the same flags on the same data: each sends its options, dataset and model
// config; a rank that differs from rank 0 is named, on every rank, before anything is written.
static void check_ranks_agree(dist::ProcessGroup& group, const TrainOptions& o, const data::Dataset& ds,
                              const models::TranslatorConfig& config) {
  nlohmann::ordered_json mine;
  mine["options"] = nlohmann::json::parse(options_json(o));
  mine["options"]["out"] = o.out_dir;
  mine["options"]["resume"] = o.resume;
  mine["options"]["force"] = o.force;
  mine["options"]["stop_after_steps"] = o.stop_after_steps;
  mine["dataset"] = dataset_fingerprint(ds);
  mine["config"] = config.to_json();
  const std::vector<std::string> all = group.all_gather(mine.dump());
  const nlohmann::json first = nlohmann::json::parse(all[0]);
  for (int r = 1; r < group.size(); ++r) {
    const nlohmann::json other = nlohmann::json::parse(all[r]);
    // "lr" -> "--lr 0.002": the flag as typed, numbers saved as exact hex floats shown plainly
    const auto shown = [](const nlohmann::json& v) {
      if (!v.is_string()) return v.dump();
      const std::string text = v.get<std::string>();
      char* end = nullptr;
      const double number = std::strtod(text.c_str(), &end);
      return !text.empty() && *end == '\0' ? fmt::format("{:g}", number) : text;
    };
    for (const auto& [key, value] : first["options"].items())
      if (other["options"][key] != value) {
        std::string flag = "--" + key;
        std::replace(flag.begin(), flag.end(), '_', '-');
        throw std::runtime_error(
            fmt::format("data-parallel: rank {} was started with {} {}, rank 0 with {} {}; every "
                        "rank needs the same flags",
                        r, flag, shown(other["options"][key]), flag, shown(value)));
      }
    if (other["dataset"] != first["dataset"])
      throw std::runtime_error(fmt::format("data-parallel: rank {}'s dataset ({}) differs from rank 0's ({})", r,
                                           other["dataset"].get<std::string>(), first["dataset"].get<std::string>()));
    if (other["config"] != first["config"])
      throw std::runtime_error(
          fmt::format("data-parallel: rank {}'s model config or vocabulary ({}) differs from rank "
                      "0's ({})",
                      r, other["config"].get<std::string>(), first["config"].get<std::string>()));
  }
}

// Everything one training run works on: train_translator builds it, run_training advances it.
bool TrainingRun::writer() const { return !group || group->rank() == 0; }

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
static TrainingProgress console_progress(const TrainingRun& run);

static TrainResult run_training(TrainingRun& run, const TrainingProgress& progress);

// --resume of a run that stopped after its last file: its model, metrics and plot are all there.
static TrainResult completed_run(const TrainOptions& o) {
  if (!o.quiet)
    fmt::print("{}: the run is complete (its model, metrics and plot are there); nothing to resume\n", o.out_dir);
  TrainResult done;
  done.checkpoint = RunFolder(o.out_dir).model_path();
  return done;
}

// The device a run trains on: --device, and under data-parallel CUDA, rank r's GPU r mod the count.
static Device run_device(const TrainOptions& o, [[maybe_unused]] dist::ProcessGroup* group) {
  Device device = o.device;
#ifdef QKV_WITH_CUDA
  if (group && device.type == DeviceType::CUDA && cuda_available())
    device = Device::cuda(group->rank() % cuda_device_count());
#endif
  return device;
}

// The English and Hindi vocabularies of the train split.
static std::pair<data::Vocab, data::Vocab> train_vocabularies(const data::Dataset& ds) {
  std::vector<std::vector<std::string>> english, hindi;
  for (const auto& p : ds.train) english.push_back(p.english), hindi.push_back(p.hindi);
  return {data::Vocab::build(english), data::Vocab::build(hindi)};
}

// The parameters the optimiser updates (frozen embeddings are left out).
static std::vector<Tensor> trained_parameters(const models::Translator& model) {
  std::vector<Tensor> trained;
  for (const Tensor& p : model.parameters())
    if (p.requires_grad()) trained.push_back(p);
  return trained;
}

// Refuses a run whose valid sentences are all past the model's layout: validation would measure nothing.
static void check_validation_measures(const models::Translator& model, const data::Dataset& ds,
                                      const std::string& data_dir) {
  const data::Layout layout = model.config().layout;
  if (!ds.valid.empty() && sentences_past_layout(model, ds.valid) == static_cast<int64_t>(ds.valid.size()))
    throw std::runtime_error(fmt::format(
        "{}/valid.tsv: every one of its {} sentences is longer than the model's {} source and {} target positions, "
        "so validation would measure nothing; give a wider --max-source/--max-target, or --positions rotary or alibi",
        data_dir, ds.valid.size(), layout.max_source, layout.max_target));
}

TrainResult train_translator(const TrainOptions& requested) {
  // Data-parallel: join the ranks first (MPI), so that every later error can stop them all.
  dist::ProcessGroup* group = requested.data_parallel ? &dist::ProcessGroup::world() : nullptr;
  const bool writer = !group || group->rank() == 0;  // rank 0 alone writes files and progress
  // --resume takes every setting from the saved state; --force starts over; otherwise an --out
  // that holds a run is refused (a rerun used to overwrite the best model of the last one).
  TrainOptions o = requested;
  if (resumed_run_is_complete(requested)) return completed_run(requested);  // nothing is left to do
  std::unique_ptr<SafeTensorsFile> saved = open_saved_state(requested, o);
  const std::string saved_path = RunFolder(requested.out_dir).state_path();
  check_option_bounds(o);  // the command line's checks, for options built in code
  if (!writer) o.quiet = true;
  const Device device = run_device(o, group);
  if (o.threads > 0) set_cpu_threads(o.threads);

  // Everything that can fail on input happens before the output directory is touched.
  const data::Dataset ds = data::load_dataset(o.data_dir);
  const auto [english, hindi] = train_vocabularies(ds);
  const models::TranslatorConfig config = translator_config(o, ds, english, hindi);
  if (saved) check_saved_config(*saved, saved_path, config, o.data_dir);  // before a model is sized from it
  models::check_training_fits(config, static_cast<int>(dtype_size(o.dtype)),
                              o.resume ? saved_path : std::string("qkv train"));
  Generator gen(o.seed);
  models::Translator model(config, gen);
  check_validation_measures(model, ds, o.data_dir);
  if (o.dtype != DType::F32) model.to(o.dtype);
  if (device != Device::cpu()) model.to(device);
  // Each rank draws its own dropout masks (runs with dropout are not bit-equal to one process).
  model.set_dropout(o.dropout, o.seed + 1 + (group ? static_cast<uint64_t>(group->rank()) : 0));
  if (o.freeze_embeddings) model.freeze_token_embeddings();
  const std::vector<Tensor> trained = trained_parameters(model);
  optim::AdamW optimizer(trained, {.lr = o.lr, .weight_decay = o.weight_decay});
  std::optional<optim::WeightAverage> average;
  if (o.ema > 0) average.emplace(trained, o.ema);

  RunState st;
  TrainingRun run{o,
                  ds,
                  english,
                  hindi,
                  config,
                  device,
                  model,
                  trained,
                  optimizer,
                  gen,
                  st,
                  group,
                  RunFolder(o.out_dir),
                  average ? &*average : nullptr};
  if (saved) {  // everything the interrupted run had, checked against this dataset and model
    restore_state(*saved, saved_path, run);
    saved.reset();
  }

  if (group) check_ranks_agree(*group, o, ds, config);  // after every input check, before any output
  if (!writer) return run_training(run, console_progress(run));
  const bool created_out = !fs::exists(o.out_dir);
  fs::create_directories(o.out_dir);
  run.folder.remove_stale_temp_files();
  if (o.force && !o.resume)
    run.folder.remove_run_files();  // start over: nothing of the old run may be mistaken for this one
  try {
    if (o.resume) {
      write_finished_epoch_outputs(run);  // a run killed at an epoch's end
    } else {  // the first save, before any training: a run killed from here on can be resumed
      st.epoch_rng = gen.state();
      st.dropout_rng = model.dropout_generator().state();
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

static TrainingProgress console_progress(const TrainingRun& run) {
  if (run.o.quiet) return {};
  // mpirun forwards rank 0's output through a pseudo-terminal to wherever mpirun's own output goes
  // (often a log): under data-parallel, plain lines, one per epoch.
  const bool live = isatty(STDOUT_FILENO) && !run.group;
  auto total = std::make_shared<int64_t>(0);
  auto last_draw = std::make_shared<Clock::time_point>(Clock::now());
  TrainingProgress p;
  p.start = [&run, total](int64_t total_steps) {
    const TrainOptions& o = run.o;
    *total = total_steps;
    const std::string ranks =
        run.group ? fmt::format(" on {} data-parallel rank{}", run.group->size(), run.group->size() == 1 ? "" : "s")
                  : "";
    fmt::print(
        "training {} attention, {} layer{}, {} positions{}{}: {} train / {} valid pairs, {} parameters ({} in "
        "attention), {} steps\n",
        models::attention_mode_name(o.attention), o.layers, o.layers == 1 ? "" : "s",
        models::positions_name(o.positions),
        o.random_positions > 0 ? fmt::format(" sampled from {}", o.random_positions) : "", ranks, run.ds.train.size(),
        run.ds.valid.size(), run.model.parameter_count(), run.model.attention_parameter_count(), total_steps);
    if (o.resume)
      fmt::print("resuming {} at epoch {}, step {} of {}\n", o.out_dir, run.st.epoch, run.st.step, total_steps);
    for (const auto& name : run.ds.available()) {
      if (name == "train") continue;
      const int64_t past = sentences_past_layout(run.model, run.ds.split(name));
      if (past > 0) fmt::print("{}\n", skipped_note(name, past, run.model.config()));
    }
  };
  if (live)
    p.step = [&run, total, last_draw](int64_t epoch, const Tensor& loss, double elapsed) {
      if (seconds_since(*last_draw) <= 0.2) return;  // the live line reads the loss back ~5 times a second
      *last_draw = Clock::now();
      const RunState& st = run.st;
      const double loss_value = loss.item();
      const double eta = elapsed / st.step * (*total - st.step);
      fmt::print("\r\033[Kepoch {:>3}/{}  step {:>5}/{}  loss {:.4f}  {:>7.0f} tok/s  ETA {}", epoch, run.o.epochs,
                 st.step, *total, loss_value, st.tokens_seen / std::max(elapsed, 1e-9), format_eta(eta));
      std::fflush(stdout);
    };
  if (live)
    p.validating = [&run](int64_t epoch) {  // the live line would otherwise stand still, its ETA stale
      fmt::print("\r\033[Kepoch {:>3}/{}  validating on {} sentences ...", epoch, run.o.epochs, run.ds.valid.size());
      std::fflush(stdout);
    };
  p.epoch = [&run, total, live](const EpochRecord& rec, bool better) {
    const RunState& st = run.st;
    if (live) fmt::print("\r\033[K");
    const double eta = st.train_seconds / std::max<int64_t>(st.step, 1) * (*total - st.step);
    fmt::print(
        "epoch {:>3}/{}  train loss {:.4f}  valid loss {:.4f}  token acc {:5.1f}%  exact {:5.1f}%  {:>7.0f} tok/s  ETA "
        "{}{}\n",
        rec.epoch, run.o.epochs, rec.train_loss, rec.valid.loss, 100 * rec.valid.token_accuracy,
        100 * rec.valid.exact_match, st.tokens_seen / std::max(st.train_seconds, 1e-9), format_eta(eta),
        better ? "  *saved" : "");
    std::fflush(stdout);
  };
  p.finish = [](const TrainResult& result) {
    fmt::print("best valid epoch {} -> {}  ({:.1f}s, {:.0f} tokens/s)\n", result.best_epoch, result.checkpoint,
               result.seconds, result.tokens_per_second);
  };
  return p;
}

// Where the last good checkpoint is, for the message that stops a run.
static std::string kept_note(const TrainResult& result) {
  return result.best_epoch > 0
             ? fmt::format("; the last good checkpoint (epoch {}) is kept in {}", result.best_epoch, result.checkpoint)
             : std::string("; no checkpoint was written");
}

// ---- the rank's batch slice ----

// The batch this rank trains on for the global batch idx: all of it, or (data-parallel) the
// rank's contiguous slice, whose loss is weighted by its share of the global batch's target
// tokens so that the summed gradient is the whole batch's. An empty slice is a batch without rows.
struct RankBatch {
  data::Batch batch;
  int64_t batch_tokens = 0;  // data-parallel: the global batch's target tokens
  double share = 1.0;
};

static RankBatch rank_batch(const TrainingRun& run, std::vector<size_t> idx) {
  RankBatch r;
  if (run.group) {
    for (size_t i : idx) r.batch_tokens += static_cast<int64_t>(run.ds.train[i].hindi.size()) + 1;  // + <eos>
    const size_t n = idx.size(), rank = static_cast<size_t>(run.group->rank()),
                 N = static_cast<size_t>(run.group->size());
    idx = std::vector<size_t>(idx.begin() + n * rank / N, idx.begin() + n * (rank + 1) / N);
  }
  r.batch = idx.empty() ? data::Batch{}
                        : data::make_batch(run.ds.train, idx, run.english, run.hindi,
                                           trimmed_layout(run.config.layout, run.ds.train, idx), run.device);
  if (run.group) r.share = static_cast<double>(r.batch.target_tokens) / static_cast<double>(r.batch_tokens);
  return r;
}

// Data-parallel: one all-reduce per step carries every gradient, this rank's loss share (the loss
// becomes the global batch's) and whether this rank saw a signal. Returns how many ranks saw one.
static int all_reduce_step(const TrainingRun& run, Tensor& loss) {
  const Tensor zero = Tensor::zeros({}, run.trained.front().dtype(), run.device);
  const auto summed = dist::all_reduce_gradients(
      *run.group, run.trained,
      {loss.defined() ? loss.detach() : zero, Tensor::scalar(interrupt_signal.load() != 0 ? 1.0 : 0.0)});
  loss = reshape(summed[0], {});
  return static_cast<int>(summed[1].item());
}

// ---- the non-finite check ----

// A non-finite loss or gradient norm stops training before the step spoils the weights. The sums
// of a window of steps stay on the device; the CPU reads them every step (a memory read), a GPU
// every kCheckEvery steps and at the end of an epoch, so there the message names the window.
class NonFiniteCheck {
 public:
  static constexpr int64_t kCheckEvery = 100;  // steps between reads on a GPU
  explicit NonFiniteCheck(int64_t steps_done) : checked_steps_(steps_done) {}
  // Adds step `step` (1-based) of `epoch`; reads the window back when it is due (always on the
  // CPU) and throws naming the epoch and step(s), the learning rate and the kept checkpoint.
  void add_step(const Tensor& loss, const Tensor& grad_norm, int64_t epoch, int64_t step, bool epoch_end,
                const TrainingRun& run, const TrainResult& result) {
    window_loss_ = window_loss_.defined() ? add(window_loss_, loss.detach()) : loss.detach();
    if (grad_norm.defined()) window_norm_ = window_norm_.defined() ? add(window_norm_, grad_norm) : grad_norm;
    if (!(run.device == Device::cpu() || step % kCheckEvery == 0 || epoch_end)) return;
    const int64_t first = checked_steps_ + 1, last = step;
    const auto where = [&] {
      return first == last ? fmt::format("epoch {}, step {}", epoch, last)
                           : fmt::format("epoch {}, one of steps {} to {}", epoch, first, last);
    };
    const double loss_value = window_loss_.item();
    if (!std::isfinite(loss_value))
      throw std::runtime_error(fmt::format("training stopped: the loss was {} at {} (learning rate {:g}){}", loss_value,
                                           where(), run.optimizer.lr, kept_note(result)));
    if (window_norm_.defined() && !std::isfinite(window_norm_.item()))
      throw std::runtime_error(fmt::format("training stopped: the gradient norm was {} at {} (learning rate {:g}){}",
                                           window_norm_.item(), where(), run.optimizer.lr, kept_note(result)));
    window_loss_ = Tensor();
    window_norm_ = Tensor();
    checked_steps_ = last;
  }

 private:
  Tensor window_loss_, window_norm_;
  int64_t checked_steps_;
};

// ---- state saving and interrupts ----

// The run's state is saved every kStateEvery steps, after each epoch but the last and when the run
// is interrupted (SIGINT, SIGTERM, or stop_after_steps in tests), which then throws Interrupted.
// Data-parallel: a signal seen by any rank arrives with the summed gradients, so all stop at one step.
class StateSaver {
 public:
  explicit StateSaver(TrainingRun& run) : run_(run) {}
  void save() {
    run_.st.dropout_rng = run_.model.dropout_generator().state();
    if (run_.writer()) save_state(run_);
  }
  void set_ranks_interrupted(int count) { ranks_interrupted_ = count; }
  // After each step: the periodic save (not at an epoch's end, which saves anyway), then the interrupt.
  void after_step(int64_t epoch, size_t epoch_size) {
    const RunState& st = run_.st;
    if (st.step % kStateEvery == 0 && st.position < static_cast<int64_t>(epoch_size)) save();
    const int sig = run_.group ? (ranks_interrupted_ > 0 ? interrupt_signal.load() : 0) : interrupt_signal.load();
    const bool any = run_.group ? ranks_interrupted_ > 0 : sig != 0;
    if (!any && !(run_.o.stop_after_steps > 0 && st.step == run_.o.stop_after_steps)) return;
    save();
    const std::string resume = run_.group ? fmt::format("mpirun -np {} qkv train --data-parallel --resume --out {}",
                                                        run_.group->size(), run_.o.out_dir)
                                          : fmt::format("qkv train --resume --out {}", run_.o.out_dir);
    throw Interrupted(fmt::format("interrupted{} at epoch {}, step {}: the run is saved; continue it with {}",
                                  sig == SIGINT    ? " (SIGINT)"
                                  : sig == SIGTERM ? " (SIGTERM)"
                                                   : "",
                                  epoch, st.step, resume));
  }

 private:
  TrainingRun& run_;
  int ranks_interrupted_ = 0;
};

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
  int64_t& tokens_seen = st.tokens_seen;
  int64_t& step = st.step;
  const size_t end = std::min(order.size(), begin + o.batch);
  const RankBatch mine = rank_batch(run, std::vector<size_t>(order.begin() + begin, order.begin() + end));
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
  const Tensor loss = models::train_step(run.model, run.optimizer, run.trained, batch, step_options).loss;
  if (run.average) run.average->update(run.optimizer.steps_taken());
  ++step;
  tokens_seen += run.group ? mine.batch_tokens : batch.target_tokens;
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
    rec.valid = run.group ? evaluate_across_ranks(*run.group, run.model, run.ds.valid, run.english, run.hindi)
                          : evaluate(run.model, run.ds.valid, run.english, run.hindi);
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
  if (run.writer()) {
    const optim::WeightAverage::SwappedIn averaged(run.average);  // --ema: the averaged weights are written
    run.folder.write_epoch_outputs(better, run.model, run.english, run.hindi, st.csv, st.steps_csv);
  }
  if (progress.epoch) progress.epoch(rec, better);
}

static TrainResult run_training(TrainingRun& run, const TrainingProgress& progress) {
  const TrainOptions& o = run.o;
  RunState& st = run.st;
  TrainResult result;
  result.checkpoint = run.folder.model_path();
  StepPlan plan;
  const int64_t steps_per_epoch = (static_cast<int64_t>(run.ds.train.size()) + o.batch - 1) / o.batch;
  plan.total_steps = steps_per_epoch * o.epochs;
  plan.warmup_steps = optim::default_warmup_steps(steps_per_epoch, plan.total_steps);
  if (progress.start) progress.start(plan.total_steps);
  const auto start = Clock::now();
  result.best_epoch = st.best_epoch;
  result.history = st.history;
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

}  // namespace qkv::app
