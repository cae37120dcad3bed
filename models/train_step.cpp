// models/train_step.cpp — the one training step (zero_grad, loss, backward, clip, update), shared by
// trainer, bench and tests. The learning-rate schedule is optim::scheduled_learning_rate (framework/optim.cpp).
#include "train_step.h"

#include <fmt/format.h>

#include "framework/ops.h"

namespace qkv::models {

StepResult train_step(Translator& model, optim::Optimizer& optimizer, const std::vector<Tensor>& params,
                      const data::Batch& batch, const StepOptions& options) {
  if (options.lr) optimizer.lr = *options.lr;
  optimizer.zero_grad();
  StepResult r;
  if (batch.source.defined()) {
    r.loss = model.loss(batch, {.label_smoothing = options.label_smoothing});
    if (options.loss_scale) r.loss = mul_scalar(r.loss, *options.loss_scale);
    r.loss.backward();
  }
  if (options.after_backward) options.after_backward(r.loss);
  if (options.clip > 0) r.grad_norm = optim::clip_grad_norm(params, options.clip);
  if (options.before_update) options.before_update(r.loss, r.grad_norm);
  optimizer.step();
  return r;
}

}  // namespace qkv::models
