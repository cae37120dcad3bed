// framework/nn.cpp — the parameter registry and the Linear, Embedding and LayerNorm layers.
#include "nn.h"

#include <cmath>
#include <stdexcept>

#include "autograd.h"
#include "ops.h"

namespace qkv::nn {

Tensor& Module::register_parameter(const std::string& name, Tensor& slot, Tensor value) {
  for (const auto& [existing, ptr] : params_)
    if (existing == name) throw std::runtime_error("register_parameter: duplicate name '" + name + "'");
  slot = std::move(value);
  slot.set_requires_grad(true);
  params_.emplace_back(name, &slot);
  return slot;
}

void Module::register_module(const std::string& name, Module& child) { children_.emplace_back(name, &child); }

void Module::visit(const std::string& prefix, std::vector<std::pair<std::string, Tensor*>>& out) const {
  for (const auto& [name, ptr] : params_) out.emplace_back(prefix + name, ptr);
  for (const auto& [name, child] : children_) child->visit(prefix + name + ".", out);
}

std::vector<std::pair<std::string, Tensor>> Module::named_parameters() const {
  std::vector<std::pair<std::string, Tensor*>> slots;
  visit("", slots);
  std::vector<std::pair<std::string, Tensor>> out;
  for (auto& [name, ptr] : slots) out.emplace_back(name, *ptr);
  return out;
}

std::vector<Tensor> Module::parameters() const {
  std::vector<Tensor> out;
  for (auto& [name, t] : named_parameters()) out.push_back(t);
  return out;
}

int64_t Module::parameter_count() const {
  int64_t n = 0;
  for (auto& [name, t] : named_parameters()) n += t.numel();
  return n;
}

void Module::zero_grad() {
  for (Tensor t : parameters()) t.zero_grad();
}

void Module::train(bool on) {
  training_ = on;
  for (auto& [name, child] : children_) child->train(on);
}

void Module::replace_parameters(const std::function<Tensor(const Tensor&)>& convert) {
  std::vector<std::pair<std::string, Tensor*>> slots;
  visit("", slots);
  for (auto& [name, ptr] : slots) {
    const bool trainable = ptr->requires_grad();  // frozen parameters stay frozen
    *ptr = convert(*ptr);
    ptr->set_requires_grad(trainable);
  }
}

void Module::to(Device device) {
  replace_parameters([device](const Tensor& t) { return t.device() == device ? t : t.to(device); });
}

void Module::to(DType dtype) {
  replace_parameters([dtype](const Tensor& t) { return t.dtype() == dtype ? t : t.to(dtype); });
}

Linear::Linear(int64_t in_features, int64_t out_features, bool has_bias, Generator& gen, DType dtype) {
  if (in_features <= 0 || out_features <= 0)
    throw std::runtime_error("Linear: features must be positive, got in=" + std::to_string(in_features) +
                             " out=" + std::to_string(out_features));
  // kaiming_uniform_(a = sqrt 5) gives bound = sqrt(6 / ((1 + a^2) fan_in)) = 1 / sqrt(fan_in)
  const double bound = 1.0 / std::sqrt(static_cast<double>(in_features));
  register_parameter("weight", weight, rand_uniform({out_features, in_features}, gen, -bound, bound, dtype));
  if (has_bias) register_parameter("bias", bias, rand_uniform({out_features}, gen, -bound, bound, dtype));
}

Tensor Linear::forward(const Tensor& x) const { return linear(x, weight, bias); }

Embedding::Embedding(int64_t count, int64_t dim, Generator& gen, DType dtype) {
  if (count <= 0 || dim <= 0)
    throw std::runtime_error("Embedding: sizes must be positive, got " + std::to_string(count) + "x" +
                             std::to_string(dim));
  register_parameter("weight", weight, randn({count, dim}, gen, dtype));
}

Tensor Embedding::forward(const Tensor& ids) const { return embedding(weight, ids); }

LayerNorm::LayerNorm(int64_t dim, double eps_, DType dtype) : eps(eps_) {
  register_parameter("weight", weight, Tensor::ones({dim}, dtype));
  register_parameter("bias", bias, Tensor::zeros({dim}, dtype));
}

Tensor LayerNorm::forward(const Tensor& x) const { return layer_norm(x, weight, bias, eps); }
Tensor LayerNorm::forward(const Tensor& x, const Tensor& residual) const {
  return add_layer_norm(x, residual, weight, bias, eps);
}

}  // namespace qkv::nn
