// train/run/step_guards.h — what guards each training step: the non-finite check, and the state
// saver that also turns an interrupt (SIGINT, SIGTERM) into a saved, resumable stop.
#pragma once

#include <fmt/format.h>

#include <atomic>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "framework/ops.h"
#include "train/run/run_state.h"
#include "train/run/training_run.h"

namespace qkv::app {

constexpr int64_t kStateEvery = 200;  // steps between saves of train_state.safetensors (run_state.h)

// The last signal caught (install_interrupt_handlers in trainer.h), or 0.
extern std::atomic<int> interrupt_signal;

// Where the last good checkpoint is, for the message that stops a run.
inline std::string kept_note(const TrainResult& result) {
  return result.best_epoch > 0
             ? fmt::format("; the last good checkpoint (epoch {}) is kept in {}", result.best_epoch, result.checkpoint)
             : std::string("; no checkpoint was written");
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
    for (const auto& [what, window] : {std::pair{"loss", &window_loss_}, {"gradient norm", &window_norm_}})
      if (window->defined() && !std::isfinite(window->item()))
        throw std::runtime_error(fmt::format("training stopped: the {} was {} at {} (learning rate {:g}){}", what,
                                             window->item(), where(), run.optimizer.lr, kept_note(result)));
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
                                  signal_note(sig), epoch, st.step, resume));
  }

 private:
  TrainingRun& run_;
  int ranks_interrupted_ = 0;
};

}  // namespace qkv::app
