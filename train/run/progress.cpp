// train/run/progress.cpp — the console's view of a training run (a live line on a terminal, one line
// per epoch) and loss.png.
#include "train/run/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>

#include "framework/distributed.h"
#include "models/translator.h"
#include "tools/render/render.h"
#include "train/run/evaluate.h"
#include "train/run/run_config.h"

namespace qkv::app {

static std::string format_eta(double seconds) {
  const int s = static_cast<int>(seconds + 0.5);
  return s >= 60 ? fmt::format("{}m{:02d}s", s / 60, s % 60) : fmt::format("{}s", s);
}

void write_loss_plot(const std::string& path, const std::vector<EpochRecord>& history, const std::string& steps_csv,
                     double steps_per_epoch, const std::string& title) {
  render::LinePlotSpec spec;
  spec.title = title + ": loss";
  spec.x_label = "epoch";
  spec.y_label = "cross-entropy loss (log scale)";
  spec.log_y = true;
  render::Series steps{"train loss, every few steps", {}, {}, {174, 199, 232}};
  render::Series train{"train loss, epoch mean (over the epoch)", {}, {}, {31, 119, 180}};
  render::Series valid{"valid loss", {}, {}, {255, 127, 14}};
  render::LinePlotSpec rate{
      .title = title + ": learning rate", .x_label = "epoch", .y_label = "learning rate", .series = {}};
  render::Series lr{"learning rate", {}, {}, {44, 160, 44}};
  // steps.csv lines: step,epoch,loss,learning_rate (after the header)
  for (size_t begin = steps_csv.find('\n'); begin != std::string::npos && begin + 1 < steps_csv.size();) {
    const size_t end = steps_csv.find('\n', begin + 1);
    long long step = 0, epoch = 0;
    double loss = 0, learning_rate = 0;
    if (std::sscanf(steps_csv.c_str() + begin + 1, "%lld,%lld,%lf,%lf", &step, &epoch, &loss, &learning_rate) == 4) {
      steps.x.push_back(static_cast<double>(step) / steps_per_epoch), steps.y.push_back(loss);
      lr.x.push_back(static_cast<double>(step) / steps_per_epoch), lr.y.push_back(learning_rate);
    }
    begin = end;
  }
  for (const auto& e : history) {  // the mean over an epoch is a level across that epoch, not a point
    train.x.insert(train.x.end(), {static_cast<double>(e.epoch) - 1, static_cast<double>(e.epoch)});
    train.y.insert(train.y.end(), {e.train_loss, e.train_loss});
    valid.x.push_back(static_cast<double>(e.epoch)), valid.y.push_back(e.valid.loss);
  }
  valid.markers = true;
  steps.markers = steps.x.size() < 2;  // a run of one logged step still shows its point
  lr.markers = lr.x.size() < 2;
  spec.series = {steps, train, valid};
  if (lr.x.empty()) return render::write_png(render::render_line_plot(spec), path);
  rate.series = {lr};
  rate.width = 560;
  render::write_png(render::hstack({render::render_line_plot(spec), render::render_line_plot(rate)}, 16), path);
}

TrainingProgress console_progress(const TrainingRun& run) {
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
        run.config.random_positions > 0 ? fmt::format(" (half sampled from {})", run.config.random_positions) : "",
        ranks, run.ds.train.size(), run.ds.valid.size(), run.model.parameter_count(),
        run.model.attention_parameter_count(), total_steps);
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
      const double loss_value = loss.item(), eta = elapsed / st.step * (*total - st.step);
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

}  // namespace qkv::app
