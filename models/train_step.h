// models/train_step.h — one training step of the translator (zero_grad, loss, backward, clipping,
// the optimiser's update; its learning-rate schedule is optim::scheduled_learning_rate): used by the
// trainer, the benchmark and the tests.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "data/dataset.h"
#include "framework/optim.h"
#include "framework/tensor.h"
#include "models/translator.h"

namespace qkv::models {

struct StepOptions {
  std::optional<double> lr;          // set on the optimiser first (a schedule's value); unset keeps its lr
  double clip = 1.0;                 // max joint gradient norm (optim::clip_grad_norm); <= 0 skips clipping
  std::optional<double> loss_scale;  // multiplies the loss before backward (a data-parallel rank's share)
  double label_smoothing = 0.0;      // of the loss's cross-entropy (ForwardOptions::label_smoothing)
  // Runs after backward, before clipping (the trainer's all-reduce); it may replace the loss, which
  // is undefined when the batch has no rows.
  std::function<void(Tensor& loss)> after_backward;
  // Runs after clipping, before the optimiser's update (the trainer's non-finite check); it may
  // throw, and then the parameters are left as they were. grad_norm is undefined without clipping.
  std::function<void(const Tensor& loss, const Tensor& grad_norm)> before_update;
};

struct StepResult {
  Tensor loss;       // the (scaled) loss of the batch, 0-d on the model's device; nothing is read back
  Tensor grad_norm;  // the gradients' joint norm before clipping; undefined when clip <= 0
};

// One step on `batch`: lr, zero_grad, loss (times loss_scale), backward, after_backward, clip the
// gradients of `params`, before_update, optimizer.step(). A batch without rows (source undefined,
// an empty data-parallel share) skips the loss and backward. Reads nothing back to the host.
StepResult train_step(Translator& model, optim::Optimizer& optimizer, const std::vector<Tensor>& params,
                      const data::Batch& batch, const StepOptions& options = {});

}  // namespace qkv::models
