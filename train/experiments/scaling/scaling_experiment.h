// train/experiments/scaling/scaling_experiment.h — the tutorial's section on sqrt(d_k) ("why divide the scores by sqrt(d_k)?"),
// measured with qkv's own ops: (1) the variance of q·k grows linearly with d and is flat once the
// scores are divided by sqrt(d); (2) large scores saturate softmax; (3) a saturated softmax passes
// almost no gradient back to its scores. Pure computation: nothing here prints or writes files.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace qkv::models {

struct ScalingOptions {
  int64_t pairs = 50000;     // sampled (q, k) pairs per dimension for the variance table
  int64_t chunk = 5000;      // pairs drawn at once (and never more than 2^23 / d, so q and k
                             // stay under 64 MiB each)
  int64_t max_d = 1024;      // dimensions 1, 2, 4, ..., max_d (max_d must be a power of two)
  int64_t grad_draws = 200;  // random (Q, K) draws averaged per dimension for the gradient table
  int64_t queries = 8;       // T_q rows of Q in the gradient experiment
  int64_t keys = 16;         // T_k rows of K (softmax runs over these)
  uint64_t seed = 0;
};

struct VarianceRow {
  int64_t d = 0;
  int64_t n = 0;          // pairs sampled
  double var_raw = 0;     // sample variance (n - 1) of q·k
  double var_scaled = 0;  // sample variance of q·k / sqrt(d)
  // Standard error of var_raw / d under the model q, k ~ N(0, I_d): Var(q·k) = d and
  // E[(q·k)^4] = 3d^2 + 6d, so Var(sample variance) ≈ (2d^2 + 6d) / n.
  double se_ratio = 0;
};

struct GradientRow {
  int64_t d = 0;
  // Norm of the gradient reaching one query's scores, ||dL/d logits_i|| for
  // L = sum(softmax(logits) * G), where the logits fed to softmax are Q K^T (unscaled) or
  // Q K^T / sqrt(d) (scaled); over all draws x queries rows: the median (a typical query) and the
  // mean (dominated by the rare rows whose two largest scores nearly tie).
  double grad_unscaled = 0, grad_scaled = 0;            // medians
  double grad_mean_unscaled = 0, grad_mean_scaled = 0;  // means
  // Mean largest attention weight of a row (1 = fully one-hot, 1/keys = uniform).
  double max_weight_unscaled = 0, max_weight_scaled = 0;
};

struct SoftmaxRow {
  std::vector<double> input, output;
};

struct ScalingResult {
  std::vector<VarianceRow> variance;
  SoftmaxRow soft, saturated;  // softmax([1.0, 1.2, 0.9]) and softmax([10.0, 12.0, 9.0])
  std::vector<GradientRow> gradient;
};

// Called once a dimension's numbers are ready ("variance" or "gradient", the row's d).
using ScalingProgress = std::function<void(const char* part, int64_t d)>;

// Validates the options (throws std::invalid_argument naming the bad one) and runs all three parts.
ScalingResult run_scaling(const ScalingOptions& options, const ScalingProgress& progress = nullptr);

// The softmax part on its own: softmax(scores) beside its scores.
SoftmaxRow softmax_row(const std::vector<double>& scores);

}  // namespace qkv::models
