// tests/program/test_scaling.cpp — the tutorial's sqrt(d_k) section (train/experiments/scaling/scaling_experiment.h), checked
// statistically: Var(q·k) = d, Var(q·k / sqrt d) = 1, the tutorial's two softmax rows, and the gradient
// collapse of an unscaled, saturated softmax. Fewer pairs and smaller d than `qkv scaling`, to stay fast.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "train/experiments/scaling/scaling_experiment.h"

using namespace qkv;

namespace {

models::ScalingOptions small_options() {
  models::ScalingOptions o;
  o.pairs = 20000;
  o.max_d = 256;
  o.grad_draws = 50;
  o.seed = 7;
  return o;
}

// Computed once and shared by the test cases below.
const models::ScalingResult& small_result() {
  static const models::ScalingResult r = models::run_scaling(small_options());
  return r;
}

// Standard error of (sample variance of X) / d for X = q·k, q, k ~ N(0, I_d) independent:
// Var(X) = d and E[X^4] = 3d^2 + 6d, so Var(s^2) ≈ (E[X^4] - d^2) / n = (2d^2 + 6d) / n.
double se_of_ratio(int64_t d_int, int64_t n) {
  const double d = static_cast<double>(d_int);
  return std::sqrt((2 * d * d + 6 * d) / static_cast<double>(n)) / d;
}

}  // namespace

TEST_SUITE("scaling") {

TEST_CASE("scaling: Var(q·k) grows linearly with d, within 4 standard errors") {
  const auto& rows = small_result().variance;
  REQUIRE(rows.size() == 9);  // d = 1, 2, ..., 256
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto& v = rows[i];
    CAPTURE(v.d);
    CHECK(v.d == (int64_t{1} << i));
    CHECK(v.n == 20000);
    const double se = se_of_ratio(v.d, v.n);
    CHECK(v.se_ratio == doctest::Approx(se).epsilon(1e-12));
    const double ratio = v.var_raw / static_cast<double>(v.d);
    CAPTURE(ratio);
    CAPTURE(se);
    CHECK(std::fabs(ratio - 1.0) <= 4 * se);
  }
  // And it really grows: 256x the dimension, ~256x the variance (not flat).
  CHECK(rows.back().var_raw / rows.front().var_raw > 200);
}

TEST_CASE("scaling: Var(q·k / sqrt d) is flat at 1, within 4 standard errors, for every d") {
  for (const auto& v : small_result().variance) {
    CAPTURE(v.d);
    CAPTURE(v.var_scaled);
    CHECK(std::fabs(v.var_scaled - 1.0) <= 4 * se_of_ratio(v.d, v.n));
    // Dividing every score by sqrt(d) divides the variance by exactly d.
    CHECK(v.var_scaled == doctest::Approx(v.var_raw / static_cast<double>(v.d)).epsilon(1e-9));
  }
}

TEST_CASE("scaling: the tutorial's softmax rows, to 3 decimals") {
  const auto& r = small_result();
  const std::vector<double> soft = {0.320, 0.391, 0.289};
  const std::vector<double> hard = {0.114, 0.844, 0.042};
  CHECK(r.soft.input == std::vector<double>{1.0, 1.2, 0.9});
  CHECK(r.saturated.input == std::vector<double>{10.0, 12.0, 9.0});
  REQUIRE(r.soft.output.size() == 3);
  REQUIRE(r.saturated.output.size() == 3);
  for (size_t i = 0; i < 3; ++i) {
    CAPTURE(i);
    CHECK(std::fabs(r.soft.output[i] - soft[i]) <= 0.5e-3);
    CHECK(std::fabs(r.saturated.output[i] - hard[i]) <= 0.5e-3);
  }
  // softmax_row on its own agrees
  const models::SoftmaxRow again = models::softmax_row({10.0, 12.0, 9.0});
  CHECK(again.output == r.saturated.output);
}

TEST_CASE("scaling: unscaled scores saturate softmax and starve the gradient; scaled ones do not") {
  const auto& g = small_result().gradient;
  REQUIRE(g.size() == 9);
  const auto& first = g.front();
  const auto& last = g.back();  // d = 256
  CAPTURE(first.grad_unscaled);
  CAPTURE(last.grad_unscaled);
  // At d = 1 scaling is the identity.
  CHECK(first.grad_unscaled == doctest::Approx(first.grad_scaled));
  CHECK(first.grad_unscaled > 0.1);
  // A typical query's gradient collapses by far more than an order of magnitude without scaling...
  CHECK(last.grad_unscaled < 0.05 * first.grad_unscaled);
  CHECK(last.grad_mean_unscaled < 0.5 * first.grad_mean_unscaled);
  CHECK(last.max_weight_unscaled > 0.85);  // nearly one-hot
  // ...and stays within a modest factor of its d = 1 value with scaling, at every d.
  for (const auto& row : g) {
    CAPTURE(row.d);
    CAPTURE(row.grad_scaled);
    CHECK(row.grad_scaled > first.grad_scaled / 1.5);
    CHECK(row.grad_scaled < first.grad_scaled * 1.5);
    CHECK(row.grad_mean_scaled > first.grad_mean_scaled / 1.5);
    CHECK(row.grad_mean_scaled < first.grad_mean_scaled * 1.5);
    CHECK(row.max_weight_scaled < 0.4);
  }
}

TEST_CASE("scaling: same seed, same numbers; bad options are rejected") {
  models::ScalingOptions o;
  o.pairs = 100;
  o.chunk = 30;  // a last, partial chunk
  o.max_d = 8;
  o.grad_draws = 3;
  o.seed = 3;
  const auto a = models::run_scaling(o);
  const auto b = models::run_scaling(o);
  REQUIRE(a.variance.size() == 4);
  for (size_t i = 0; i < a.variance.size(); ++i) {
    CHECK(a.variance[i].var_raw == b.variance[i].var_raw);
    CHECK(a.gradient[i].grad_unscaled == b.gradient[i].grad_unscaled);
  }
  o.seed = 4;
  CHECK(models::run_scaling(o).variance[0].var_raw != a.variance[0].var_raw);

  auto with = [](auto change) {
    models::ScalingOptions bad;
    bad.pairs = 10;
    bad.max_d = 2;
    bad.grad_draws = 1;
    change(bad);
    return bad;
  };
  CHECK_THROWS_AS(models::run_scaling(with([](auto& x) { x.pairs = 1; })), std::invalid_argument);
  CHECK_THROWS_AS(models::run_scaling(with([](auto& x) { x.max_d = 3; })), std::invalid_argument);
  CHECK_THROWS_AS(models::run_scaling(with([](auto& x) { x.max_d = 0; })), std::invalid_argument);
  CHECK_THROWS_AS(models::run_scaling(with([](auto& x) { x.chunk = 0; })), std::invalid_argument);
  CHECK_THROWS_AS(models::run_scaling(with([](auto& x) { x.keys = 1; })), std::invalid_argument);
  CHECK_THROWS_AS(models::softmax_row({}), std::invalid_argument);
}

}  // TEST_SUITE
