// framework/nn.h — modules with a named-parameter registry, and the layers the models use:
// Linear, Embedding, LayerNorm. Initialisation follows PyTorch's defaults. Nothing here knows
// about attention or the translator (those live in models/).
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "random.h"
#include "tensor.h"

namespace qkv::nn {

// A module owns parameters (as member Tensors) and child modules, each registered by name so
// that checkpoints can save them as "child.param". Modules are neither copied nor moved, since
// the registry points at their members.
class Module {
 public:
  Module() = default;
  virtual ~Module() = default;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // ("attn.W_q.weight", tensor) pairs in registration order, children after own parameters.
  std::vector<std::pair<std::string, Tensor>> named_parameters() const;
  std::vector<Tensor> parameters() const;
  int64_t parameter_count() const;
  void zero_grad();
  void train(bool on = true);
  bool training() const { return training_; }
  // Moves every parameter to `device` or `dtype` (they stay leaves that require grad).
  void to(Device device);
  void to(DType dtype);

 protected:
  Tensor& register_parameter(const std::string& name, Tensor& slot, Tensor value);
  void register_module(const std::string& name, Module& child);

 private:
  void visit(const std::string& prefix, std::vector<std::pair<std::string, Tensor*>>& out) const;
  // Replaces every parameter by convert(parameter), keeping whether it requires grad.
  void replace_parameters(const std::function<Tensor(const Tensor&)>& convert);
  std::vector<std::pair<std::string, Tensor*>> params_;
  std::vector<std::pair<std::string, Module*>> children_;
  bool training_ = true;
};

// y = x W^T + b, W (out, in). Kaiming-uniform W and uniform b in +-1/sqrt(in), as in PyTorch.
class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias, Generator& gen, DType dtype = DType::F32);
  Tensor forward(const Tensor& x) const;  // (..., in) -> (..., out)
  Tensor weight, bias;
};

// Rows of a (count, dim) table, initialised N(0, 1) as in PyTorch.
class Embedding : public Module {
 public:
  Embedding(int64_t count, int64_t dim, Generator& gen, DType dtype = DType::F32);
  Tensor forward(const Tensor& ids) const;  // (...) int64 -> (..., dim)
  Tensor weight;
};

// Normalises the last axis; weight starts at 1, bias at 0.
class LayerNorm : public Module {
 public:
  explicit LayerNorm(int64_t dim, double eps = 1e-5, DType dtype = DType::F32);
  Tensor forward(const Tensor& x) const;
  Tensor forward(const Tensor& x, const Tensor& residual) const;  // of x + residual, in one pass
  Tensor weight, bias;
  double eps;
};

}  // namespace qkv::nn
