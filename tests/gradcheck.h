// tests/gradcheck.h — float64 central-difference gradient checking with PyTorch's gradcheck
// criterion: eps 1e-6 and |analytic - numeric| <= atol + rtol * |numeric| (atol 1e-5, rtol 1e-3).
// It compares the full Jacobian: one backward pass per output element. gradcheck_parameters does
// the same for a scalar loss of a model's own parameters.
#pragma once

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "framework/autograd.h"
#include "framework/ops.h"

namespace qkv::testing {

struct GradcheckOptions {
  double eps = 1e-6, atol = 1e-5, rtol = 1e-3;
};

struct GradcheckResult {
  bool ok = true;
  std::string first_failure;
  int checked = 0;
};

using TensorFn = std::function<Tensor(const std::vector<Tensor>&)>;

// `inputs` are float64 CPU tensors; each becomes a leaf that requires grad.
inline GradcheckResult gradcheck(const TensorFn& f, std::vector<Tensor> inputs, GradcheckOptions opt = {}) {
  GradcheckResult result;
  for (Tensor& x : inputs) {
    x = x.clone();
    x.set_requires_grad(true);
  }
  Tensor probe;
  {
    NoGradGuard no_grad;
    probe = f(inputs);
  }
  const int64_t n_out = probe.numel();
  // Analytic Jacobian rows: d out[j] / d inputs, via one backward per output element.
  std::vector<std::vector<std::vector<double>>> analytic(n_out);
  for (int64_t j = 0; j < n_out; ++j) {
    for (Tensor& x : inputs) x.zero_grad();
    Tensor out = f(inputs);
    std::vector<double> seed(static_cast<size_t>(n_out), 0.0);
    seed[j] = 1.0;
    if (out.requires_grad()) out.backward(Tensor::from_vector(seed, out.shape(), DType::F64));
    for (Tensor& x : inputs)
      analytic[j].push_back(x.grad().defined() ? x.grad().to_vector() : std::vector<double>(x.numel(), 0.0));
  }
  // Numeric Jacobian columns by central differences.
  NoGradGuard no_grad;
  for (size_t i = 0; i < inputs.size(); ++i) {
    double* data = inputs[i].data<double>();
    for (int64_t k = 0; k < inputs[i].numel(); ++k) {
      const double saved = data[k];
      data[k] = saved + opt.eps;
      const std::vector<double> plus = f(inputs).to_vector();
      data[k] = saved - opt.eps;
      const std::vector<double> minus = f(inputs).to_vector();
      data[k] = saved;
      for (int64_t j = 0; j < n_out; ++j) {
        const double numeric = (plus[j] - minus[j]) / (2 * opt.eps);
        const double a = analytic[j][i][k];
        ++result.checked;
        const bool close = std::fabs(a - numeric) <= opt.atol + opt.rtol * std::fabs(numeric);
        if (!close && result.ok) {
          result.ok = false;
          result.first_failure =
              fmt::format("input {} element {} output {}: analytic {} vs numeric {}", i, k, j, a, numeric);
        }
      }
    }
  }
  return result;
}

// The same criterion for a scalar `loss()` of named float64 CPU parameters that live inside a
// model (a whole forward pass): one backward pass gives every analytic gradient, then each
// parameter element is nudged in place by +-eps for the central difference. A failure names the
// parameter and the element.
inline GradcheckResult gradcheck_parameters(const std::vector<std::pair<std::string, Tensor>>& params,
                                            const std::function<Tensor()>& loss, GradcheckOptions opt = {}) {
  GradcheckResult result;
  for (const auto& [name, p] : params) {
    Tensor t = p;
    t.zero_grad();
  }
  Tensor out = loss();
  if (out.numel() != 1) {
    result.ok = false;
    result.first_failure = fmt::format("the loss has {} elements, expected 1", out.numel());
    return result;
  }
  if (out.requires_grad()) out.backward();
  NoGradGuard no_grad;
  for (const auto& [name, p] : params) {
    const std::vector<double> analytic =
        p.grad().defined() ? p.grad().to_vector() : std::vector<double>(p.numel(), 0.0);
    double* data = p.data<double>();
    for (int64_t k = 0; k < p.numel(); ++k) {
      const double saved = data[k];
      data[k] = saved + opt.eps;
      const double plus = loss().item();
      data[k] = saved - opt.eps;
      const double minus = loss().item();
      data[k] = saved;
      const double numeric = (plus - minus) / (2 * opt.eps);
      ++result.checked;
      if (!(std::fabs(analytic[k] - numeric) <= opt.atol + opt.rtol * std::fabs(numeric)) && result.ok) {
        result.ok = false;
        result.first_failure = fmt::format("{} element {}: analytic {} vs numeric {}", name, k, analytic[k], numeric);
      }
    }
  }
  return result;
}

}  // namespace qkv::testing

// CHECK that a gradcheck passes, printing the first mismatch when it does not.
#define CHECK_GRADCHECK(...)                                  \
  do {                                                        \
    auto gc_result_ = ::qkv::testing::gradcheck(__VA_ARGS__); \
    INFO(gc_result_.first_failure);                           \
    CHECK(gc_result_.ok);                                     \
    CHECK(gc_result_.checked > 0);                            \
  } while (0)
