// train/experiments/scaling/scaling_experiment.cpp — the sqrt(d_k) experiment (see scaling_experiment.h), computed with
// qkv ops.
#include "scaling_experiment.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

#include "framework/autograd.h"
#include "framework/ops.h"
#include "framework/random.h"

namespace qkv::models {

namespace {

// Separate, fixed streams for the two random parts, so changing one part's size never changes
// the other part's numbers.
constexpr uint64_t kGradientStream = 0x9E3779B97F4A7C15ull;

void validate(const ScalingOptions& o) {
  auto bad = [](const std::string& what) { throw std::invalid_argument("scaling: " + what); };
  if (o.pairs < 2)
    bad("pairs must be at least 2 (a sample variance needs two samples), got " + std::to_string(o.pairs));
  if (o.chunk < 1) bad("chunk must be positive, got " + std::to_string(o.chunk));
  if (o.max_d < 1 || (o.max_d & (o.max_d - 1)) != 0 || o.max_d > (int64_t{1} << 20))
    bad("max_d must be a power of two between 1 and 2^20, got " + std::to_string(o.max_d));
  if (o.grad_draws < 1) bad("grad_draws must be positive, got " + std::to_string(o.grad_draws));
  if (o.queries < 1) bad("queries must be positive, got " + std::to_string(o.queries));
  if (o.keys < 2) bad("keys must be at least 2 (softmax over one key is constant), got " + std::to_string(o.keys));
}

double average(const std::vector<double>& v) {
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

double median(std::vector<double> v) {
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  if (v.size() % 2 == 1) return v[mid];
  const double upper = v[mid];
  return 0.5 * (upper + *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid)));
}

}  // namespace

// 1, 2, 4, ..., max_d.
static std::vector<int64_t> scaling_dims(int64_t max_d) {
  std::vector<int64_t> dims;
  for (int64_t d = 1; d <= max_d; d *= 2) dims.push_back(d);
  return dims;
}

// The variance part of run_scaling (each part draws from its own generator seeded from options.seed).
static std::vector<VarianceRow> score_variance(const ScalingOptions& o, const ScalingProgress& progress) {
  NoGradGuard no_grad;
  Generator gen(o.seed);
  std::vector<VarianceRow> rows;
  for (const int64_t d : scaling_dims(o.max_d)) {
    const double inv_sqrt_d = 1.0 / std::sqrt(static_cast<double>(d));
    // Sums of x and x^2 in double; the mean is ~0 and the variance is d, so the one-pass
    // formula loses nothing measurable here.
    double s_raw = 0, ss_raw = 0, s_scaled = 0, ss_scaled = 0;
    // At most 2^23 doubles (64 MiB) per q or k block, whatever the chunk option says.
    const int64_t chunk = std::max<int64_t>(1, std::min(o.chunk, (int64_t{1} << 23) / d));
    for (int64_t done = 0; done < o.pairs; done += chunk) {
      const int64_t n = std::min(chunk, o.pairs - done);
      const Tensor q = randn({n, d}, gen, DType::F64), k = randn({n, d}, gen, DType::F64);
      const Tensor dots = sum(mul(q, k), -1);              // (n,) the scores q·k
      const Tensor scaled = mul_scalar(dots, inv_sqrt_d);  // (n,) q·k / sqrt(d)
      for (const double x : dots.to_vector()) s_raw += x, ss_raw += x * x;
      for (const double x : scaled.to_vector()) s_scaled += x, ss_scaled += x * x;
    }
    const double n = static_cast<double>(o.pairs), dd = static_cast<double>(d);
    rows.push_back({.d = d,
                    .n = o.pairs,
                    .var_raw = (ss_raw - s_raw * s_raw / n) / (n - 1),
                    .var_scaled = (ss_scaled - s_scaled * s_scaled / n) / (n - 1),
                    .se_ratio = std::sqrt((2 * dd * dd + 6 * dd) / n) / dd});
    if (progress) progress("variance", d);
  }
  return rows;
}

SoftmaxRow softmax_row(const std::vector<double>& scores) {
  if (scores.empty()) throw std::invalid_argument("scaling: softmax_row needs at least one score");
  NoGradGuard no_grad;
  const Tensor x = Tensor::from_vector(scores, {static_cast<int64_t>(scores.size())}, DType::F64);
  return {scores, softmax(x).to_vector()};
}

// The gradient part of run_scaling.
static std::vector<GradientRow> softmax_gradient(const ScalingOptions& o, const ScalingProgress& progress) {
  Generator gen(o.seed ^ kGradientStream);
  // One fixed upstream gradient G for every draw and dimension: L = sum(softmax(logits) * G).
  const Tensor G = randn({o.queries, o.keys}, gen, DType::F64);
  std::vector<GradientRow> rows;
  for (const int64_t d : scaling_dims(o.max_d)) {
    const double inv_sqrt_d = 1.0 / std::sqrt(static_cast<double>(d));
    std::vector<double> norms[2], max_weights[2];  // [scaled], one entry per query row
    for (int64_t draw = 0; draw < o.grad_draws; ++draw) {
      Tensor S;
      {
        NoGradGuard no_grad;
        const Tensor Q = randn({o.queries, d}, gen, DType::F64), K = randn({o.keys, d}, gen, DType::F64);
        S = matmul(Q, K, false, true);  // (T_q, T_k) raw scores Q K^T
      }
      for (const bool scaled : {false, true}) {
        // The logits softmax sees, as a leaf: the gradient we read is the one reaching the scores.
        Tensor logits;
        {
          NoGradGuard no_grad;
          logits = scaled ? mul_scalar(S, inv_sqrt_d) : S.clone();
        }
        logits.set_requires_grad(true);
        const Tensor p = softmax(logits), loss = sum(mul(p, G));
        loss.backward();
        NoGradGuard no_grad;
        const Tensor& g = logits.grad();
        for (const double x : sqrt(sum(mul(g, g), -1)).to_vector()) norms[scaled].push_back(x);
        for (const double x : max(p.detach(), -1).to_vector()) max_weights[scaled].push_back(x);
      }
    }
    rows.push_back({.d = d,
                    .grad_unscaled = median(norms[0]),
                    .grad_scaled = median(norms[1]),
                    .grad_mean_unscaled = average(norms[0]),
                    .grad_mean_scaled = average(norms[1]),
                    .max_weight_unscaled = average(max_weights[0]),
                    .max_weight_scaled = average(max_weights[1])});
    if (progress) progress("gradient", d);
  }
  return rows;
}

ScalingResult run_scaling(const ScalingOptions& o, const ScalingProgress& progress) {
  validate(o);
  ScalingResult r;
  r.variance = score_variance(o, progress);
  r.soft = softmax_row({1.0, 1.2, 0.9});
  r.saturated = softmax_row({10.0, 12.0, 9.0});
  r.gradient = softmax_gradient(o, progress);
  return r;
}

}  // namespace qkv::models
