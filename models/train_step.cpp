// models/train_step.cpp — the one training step (zero_grad, loss, backward, clip, update) and the
// learning-rate schedule (linear warm-up, cosine decay to 10%), shared by trainer, bench and tests.
#include "train_step.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "framework/ops.h"

namespace qkv::models {

StepResult train_step(Translator& model, optim::Optimizer& optimizer, const std::vector<Tensor>& params,
                      const data::Batch& batch, const StepOptions& options) {
  if (options.lr) optimizer.lr = *options.lr;
  optimizer.zero_grad();
  StepResult r;
  if (batch.source.defined()) {
    r.loss = model.loss(batch);
    if (options.loss_scale) r.loss = mul_scalar(r.loss, *options.loss_scale);
    r.loss.backward();
  }
  if (options.after_backward) options.after_backward(r.loss);
  if (options.clip > 0) r.grad_norm = optim::clip_grad_norm(params, options.clip);
  if (options.before_update) options.before_update(r.loss, r.grad_norm);
  optimizer.step();
  return r;
}

double scheduled_learning_rate(int64_t step, int64_t total_steps, int64_t warmup_steps, double base_lr,
                               const std::string& schedule) {
  if (schedule == "constant") return base_lr;
  if (schedule != "cosine")
    throw std::runtime_error(fmt::format("learning-rate schedule '{}': expected cosine or constant", schedule));
  if (total_steps <= 0 || warmup_steps <= 0 || step < 0)
    throw std::runtime_error(fmt::format("learning-rate schedule: step {} of {} with {} warm-up step(s)", step,
                                         total_steps, warmup_steps));
  // (the trainer's exact expression: its checkpoints depend on every rounding)
  const double progress = static_cast<double>(step) / total_steps;
  const double warmup = std::min(1.0, static_cast<double>(step + 1) / warmup_steps);
  return base_lr * warmup * (0.1 + 0.45 * (1.0 + std::cos(M_PI * progress)));
}

int64_t default_warmup_steps(int64_t steps_per_epoch, int64_t total_steps) {
  return std::min(steps_per_epoch, std::max<int64_t>(1, total_steps / 10));
}

}  // namespace qkv::models
