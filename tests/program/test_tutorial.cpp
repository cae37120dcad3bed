// tests/program/test_tutorial.cpp — every number the tutorial prints for its running example, to 4
// decimals, recomputed by qkv's ops (in float64 and float32).
#include <doctest/doctest.h>

#include <cmath>

#include "train/experiments/tutorial/tutorial_example.h"

using namespace qkv;

namespace {
void check_table(const Tensor& t, const std::vector<double>& expected, double tol) {
  const std::vector<double> got = t.to_vector();
  REQUIRE(got.size() == expected.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(std::fabs(got[i] - expected[i]) <= tol);
  }
}
}  // namespace

TEST_CASE("seed: the running example money bank grows, to 4 decimals") {
  for (DType dtype : {DType::F64, DType::F32}) {
    CAPTURE(dtype_name(dtype));
    const models::TutorialExample ex = models::run_tutorial_example(dtype);
    const double tol = 0.5e-4;  // the tutorial prints 4 decimals
    check_table(ex.S, {2, 1, 1, 1, 2, 1, 1, 1, 3}, 0);
    check_table(ex.S_scaled, {1.0, 0.5, 0.5, 0.5, 1.0, 0.5, 0.5, 0.5, 1.5}, 0);
    check_table(ex.W, {0.4519, 0.2741, 0.2741, 0.2741, 0.4519, 0.2741, 0.2119, 0.2119, 0.5761}, tol);
    check_table(ex.Y,
                {0.7259, 0.5481, 0.7259, 0.2741,   // y_money
                 0.7259, 0.7259, 0.5481, 0.2741,   // y_bank
                 0.4239, 0.7881, 0.7881, 0.5761},  // y_grows
                tol);
    CHECK(std::fabs(ex.cos_before - 0.5) <= tol);
    CHECK(std::fabs(ex.cos_after - 0.9779) <= tol);
    // the bank row's exponentials and their sum, as the tutorial shows them
    CHECK(std::fabs(std::exp(0.5) - 1.6487) <= tol);
    CHECK(std::fabs(2 * std::exp(0.5) + std::exp(1.0) - 6.0157) <= tol);
  }
}
