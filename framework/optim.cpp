// framework/optim.cpp — the optimiser update rules: SGD written with ops, Adam/AdamW as one fused
// backend pass per parameter (Backend::adam_update), so every rule runs on any backend.
#include "optim.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "autograd.h"
#include "backend.h"
#include "ops.h"

namespace qkv::optim {

Optimizer::Optimizer(std::vector<Tensor> params) : lr(0.0), params_(std::move(params)) {
  for (const Tensor& p : params_)
    if (!p.defined() || !p.requires_grad() || !p.is_leaf())
      throw std::runtime_error("optimizer: every parameter must be a leaf tensor that requires grad");
}

void Optimizer::zero_grad() {
  for (Tensor& p : params_) p.zero_grad();
}

static void check_lr(double lr, const char* name) {
  if (!(lr >= 0.0)) throw std::runtime_error(fmt::format("{}: invalid learning rate {}", name, lr));
}

SGD::SGD(std::vector<Tensor> params, SGDOptions options) : Optimizer(std::move(params)), opt_(options) {
  check_lr(options.lr, "SGD");
  if (options.nesterov && (options.momentum <= 0 || options.dampening != 0))
    throw std::runtime_error("SGD: nesterov needs momentum > 0 and dampening = 0");
  lr = options.lr;
  momentum_buffers_.resize(params_.size());
}

void SGD::step() {
  NoGradGuard no_grad;
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor& p = params_[i];
    if (!p.grad().defined()) continue;
    Tensor g = p.grad();
    if (opt_.weight_decay != 0) g = add(g, mul_scalar(p, opt_.weight_decay));  // g += wd * p
    if (opt_.momentum != 0) {
      Tensor& buf = momentum_buffers_[i];
      if (!buf.defined())
        buf = g.clone();  // first step: buf = g
      else
        buf = add(mul_scalar(buf, opt_.momentum), mul_scalar(g, 1.0 - opt_.dampening));
      g = opt_.nesterov ? add(g, mul_scalar(buf, opt_.momentum)) : buf;
    }
    p.copy_(sub(p, mul_scalar(g, lr)));  // p -= lr * g
  }
}

Adam::Adam(std::vector<Tensor> params, AdamOptions options, bool decoupled)
    : Optimizer(std::move(params)), opt_(options), decoupled_(decoupled) {
  check_lr(options.lr, decoupled ? "AdamW" : "Adam");
  if (!(options.beta1 >= 0 && options.beta1 < 1 && options.beta2 >= 0 && options.beta2 < 1))
    throw std::runtime_error(fmt::format("Adam: betas ({}, {}) must be in [0, 1)", options.beta1, options.beta2));
  if (!(options.eps >= 0)) throw std::runtime_error(fmt::format("Adam: invalid eps {}", options.eps));
  lr = options.lr;
  // The moments start at zero, as PyTorch's lazily created ones do, but are made here rather than
  // in the first step(): that step then asks for the same memory as every later one, so a training
  // loop's tensor storage is all taken from the system in its first step (the block cache).
  for (const Tensor& p : params_)
    for (std::vector<Tensor>* moments : {&exp_avg_, &exp_avg_sq_})
      moments->push_back(Tensor::zeros(p.shape(), p.dtype(), p.device()));
}

void Adam::restore(int64_t steps, std::vector<Tensor> exp_avg, std::vector<Tensor> exp_avg_sq) {
  if (steps < 0 || exp_avg.size() != params_.size() || exp_avg_sq.size() != params_.size())
    throw std::runtime_error(fmt::format("Adam: a saved state of {} step(s) and {}/{} moments for {} parameters", steps,
                                         exp_avg.size(), exp_avg_sq.size(), params_.size()));
  for (size_t i = 0; i < params_.size(); ++i)
    for (const Tensor* m : {&exp_avg[i], &exp_avg_sq[i]})
      if (!m->defined() || m->shape() != params_[i].shape())
        throw std::runtime_error(fmt::format("Adam: a saved moment {} does not match its parameter {}", m->describe(),
                                             params_[i].describe()));
  step_ = steps;
  exp_avg_ = std::move(exp_avg);
  exp_avg_sq_ = std::move(exp_avg_sq);
}

void Adam::step() {
  NoGradGuard no_grad;
  ++step_;
  AdamStep s{lr, opt_.beta1, opt_.beta2, opt_.eps, opt_.weight_decay, decoupled_};
  s.step_size = lr / (1.0 - std::pow(opt_.beta1, static_cast<double>(step_)));
  s.sqrt_bias_correction2 = std::sqrt(1.0 - std::pow(opt_.beta2, static_cast<double>(step_)));
  for (size_t i = 0; i < params_.size(); ++i) {
    Tensor& p = params_[i];
    if (!p.grad().defined()) continue;
    const Tensor& g = p.grad();
    if (g.shape() != p.shape() || g.dtype() != p.dtype() || g.device() != p.device())
      throw std::runtime_error(
          fmt::format("Adam: gradient {} does not match its parameter {}", g.describe(), p.describe()));
    // one fused pass per parameter, in place (the arithmetic is documented at Backend::adam_update)
    backend_for(p.device())
        .adam_update(p.dtype(), p.data_ptr(), g.data_ptr(), exp_avg_[i].data_ptr(), exp_avg_sq_[i].data_ptr(),
                     p.numel(), s);
  }
}

WeightAverage::WeightAverage(std::vector<Tensor> params, double decay) : params_(std::move(params)), decay_(decay) {
  if (!(decay > 0.0 && decay < 1.0))
    throw std::runtime_error(fmt::format("WeightAverage: decay must be in (0, 1), got {}", decay));
  NoGradGuard no_grad;
  for (const Tensor& p : params_) averages_.push_back(p.detach().clone());
}

void WeightAverage::update(int64_t step) {
  if (step < 1) throw std::runtime_error(fmt::format("WeightAverage: update after step {} (steps count from 1)", step));
  NoGradGuard no_grad;
  const double d = std::min(decay_, (1.0 + static_cast<double>(step)) / (10.0 + static_cast<double>(step)));
  for (size_t i = 0; i < params_.size(); ++i) {
    if (step == 1) averages_[i] = params_[i].detach().clone();  // the average starts at the first step's weights
    averages_[i] = add(mul_scalar(averages_[i], d), mul_scalar(params_[i].detach(), 1.0 - d));
  }
}

void WeightAverage::swap() {
  NoGradGuard no_grad;
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor values = params_[i].detach().clone();
    Tensor param = params_[i].detach();
    param.copy_(averages_[i]);
    averages_[i] = values;
  }
}

void WeightAverage::restore(std::vector<Tensor> averages) {
  if (averages.size() != params_.size())
    throw std::runtime_error(
        fmt::format("WeightAverage: {} saved averages for {} parameters", averages.size(), params_.size()));
  for (size_t i = 0; i < params_.size(); ++i)
    if (averages[i].shape() != params_[i].shape() || averages[i].dtype() != params_[i].dtype() ||
        averages[i].device() != params_[i].device())
      throw std::runtime_error(fmt::format("WeightAverage: a saved average {} does not match its parameter {}",
                                           averages[i].describe(), params_[i].describe()));
  averages_ = std::move(averages);
}

Tensor clip_grad_norm(const std::vector<Tensor>& params, double max_norm) {
  NoGradGuard no_grad;
  // The squared norm in one 0-d tensor: each gradient's sum of squares (Backend::sum_squares, the
  // bits of sum(mul(g, g)) with no tensor of squares) added in turn, in the gradients' dtype.
  Tensor total_sq;
  for (const Tensor& p : params) {
    const Tensor& g = p.grad();
    if (!g.defined()) continue;
    const bool first = !total_sq.defined();
    if (first) {
      total_sq = Tensor::empty({}, g.dtype(), g.device());
    } else if (g.dtype() != total_sq.dtype() || g.device() != total_sq.device()) {
      throw std::runtime_error(fmt::format("clip_grad_norm: gradient {} differs in dtype or device from {} before it",
                                           g.describe(), total_sq.describe()));
    }
    backend_for(g.device()).sum_squares(g.dtype(), g.data_ptr(), g.numel(), !first, total_sq.data_ptr());
  }
  if (!total_sq.defined()) return Tensor::scalar(0.0);
  const Tensor norm = sqrt(total_sq);
  // coef = min(1, max_norm / (norm + 1e-6)), written as 1 - relu(1 - c) to stay on the device
  const Tensor coef = mul_scalar(pow_scalar(add_scalar(norm, 1e-6), -1.0), max_norm);
  const Tensor clamped = add_scalar(neg(relu(add_scalar(neg(coef), 1.0))), 1.0);
  // In place, each gradient once (two parameters may hold one gradient tensor: it is scaled once,
  // as the new tensors of mul were).
  std::vector<const void*> scaled;
  for (const Tensor& p : params) {
    if (!p.grad().defined()) continue;
    Tensor g = p.grad();
    if (std::find(scaled.begin(), scaled.end(), g.data_ptr()) != scaled.end()) continue;
    scaled.push_back(g.data_ptr());
    g.mul_(clamped);
  }
  return norm;
}

double scheduled_learning_rate(int64_t step, int64_t total_steps, int64_t warmup_steps, double base_lr,
                               Schedule schedule) {
  if (schedule == Schedule::Constant) return base_lr;
  if (total_steps <= 0 || warmup_steps <= 0 || step < 0)
    throw std::runtime_error(
        fmt::format("learning-rate schedule: step {} of {} with {} warm-up step(s)", step, total_steps, warmup_steps));
  // (the trainer's exact expression: its checkpoints depend on every rounding)
  const double progress = static_cast<double>(step) / total_steps;
  const double warmup = std::min(1.0, static_cast<double>(step + 1) / warmup_steps);
  return base_lr * warmup * (0.1 + 0.45 * (1.0 + std::cos(M_PI * progress)));
}

int64_t default_warmup_steps(int64_t steps_per_epoch, int64_t total_steps) {
  return std::min(steps_per_epoch, std::max<int64_t>(1, total_steps / 10));
}

}  // namespace qkv::optim
