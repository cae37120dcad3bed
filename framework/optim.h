// framework/optim.h — SGD (momentum, Nesterov), Adam and AdamW with exactly PyTorch's update
// equations, clip_grad_norm and the learning-rate schedule (warm-up, cosine decay). Parameters
// without a gradient are skipped, as in PyTorch.
#pragma once

#include <vector>

#include "tensor.h"

namespace qkv::optim {

class Optimizer {
 public:
  explicit Optimizer(std::vector<Tensor> params);
  virtual ~Optimizer() = default;
  virtual void step() = 0;
  void zero_grad();  // drops every gradient (set_to_none, PyTorch's default)
  double lr;

 protected:
  std::vector<Tensor> params_;
};

struct SGDOptions {
  double lr = 1e-2, momentum = 0.0, dampening = 0.0, weight_decay = 0.0;
  bool nesterov = false;
};

class SGD : public Optimizer {
 public:
  SGD(std::vector<Tensor> params, SGDOptions options);
  void step() override;

 private:
  SGDOptions opt_;
  std::vector<Tensor> momentum_buffers_;
};

struct AdamOptions {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0.0;
};

// Adam adds weight_decay * p to the gradient (L2); AdamW (decoupled = true) instead shrinks the
// parameter by lr * weight_decay before the Adam step.
class Adam : public Optimizer {
 public:
  Adam(std::vector<Tensor> params, AdamOptions options, bool decoupled_weight_decay = false);
  void step() override;
  int64_t steps_taken() const { return step_; }
  // The moments (zero until a parameter has had a gradient), for saving a run; and restoring them
  // (one per parameter, of its shape) with the step count, so that a resumed run continues exactly.
  const std::vector<Tensor>& exp_avg() const { return exp_avg_; }
  const std::vector<Tensor>& exp_avg_sq() const { return exp_avg_sq_; }
  void restore(int64_t steps, std::vector<Tensor> exp_avg, std::vector<Tensor> exp_avg_sq);

 private:
  AdamOptions opt_;
  bool decoupled_;
  int64_t step_ = 0;
  std::vector<Tensor> exp_avg_, exp_avg_sq_;
};

class AdamW : public Adam {
 public:
  AdamW(std::vector<Tensor> params, AdamOptions options) : Adam(std::move(params), options, true) {}
};

// An exponential moving average of parameters (Polyak averaging, as torch.optim.swa_utils'
// get_ema_multi_avg_fn): update(n), after the n-th optimiser step (n >= 1), sets
//   average = d * average + (1 - d) * param,  d = min(decay, (1 + n) / (10 + n)),
// the short warm-up of TensorFlow's ExponentialMovingAverage, which keeps the first steps' weights
// from dominating. The first update starts the averages from the parameters, as AveragedModel's
// first update copies them; before it they are copies of the initial weights. swap() exchanges the parameters' values with the averages in place
// (the optimiser keeps its tensors), so evaluating or saving the averaged model is swap, work,
// swap back: SwappedIn does that for one scope.
class WeightAverage {
 public:
  WeightAverage(std::vector<Tensor> params, double decay);
  void update(int64_t step);
  void swap();
  const std::vector<Tensor>& averages() const { return averages_; }
  // The averages of a saved run (the shapes, dtypes and devices of the parameters).
  void restore(std::vector<Tensor> averages);
  double decay() const { return decay_; }

  class SwappedIn {
   public:
    explicit SwappedIn(WeightAverage* average) : average_(average) {
      if (average_) average_->swap();
    }
    ~SwappedIn() {
      if (average_) average_->swap();
    }
    SwappedIn(const SwappedIn&) = delete;
    SwappedIn& operator=(const SwappedIn&) = delete;

   private:
    WeightAverage* average_;
  };

 private:
  std::vector<Tensor> params_, averages_;
  double decay_;
};

// Scales all gradients so that their joint L2 norm is at most max_norm: every gradient is
// multiplied by min(1, max_norm / (norm + 1e-6)), as in PyTorch. Returns the norm before clipping
// as a 0-d tensor on the gradients' device; nothing is read back to the host.
Tensor clip_grad_norm(const std::vector<Tensor>& params, double max_norm);

// The learning rate of step `step` (0-based) of `total_steps`: Constant gives base_lr; Cosine
// a linear warm-up over the first warmup_steps, times a cosine decay from base_lr to 10% of it.
enum class Schedule { Cosine, Constant };
double scheduled_learning_rate(int64_t step, int64_t total_steps, int64_t warmup_steps, double base_lr,
                               Schedule schedule);

// The trainer's warm-up: one epoch, at most a tenth of the run, at least one step.
int64_t default_warmup_steps(int64_t steps_per_epoch, int64_t total_steps);

}  // namespace qkv::optim
