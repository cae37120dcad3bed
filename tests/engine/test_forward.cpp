// tests/engine/test_forward.cpp — forward values of the op-table cases that give them (tests/op_cases.h), in
// float32 and float64; the ops' special values (relu's NaN, -0.0, and its gradient there; int64
// indices; dropout) and creation.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "framework/autograd.h"
#include "framework/ops.h"
#include "framework/random.h"
#include "tests/op_cases.h"

using namespace qkv;

namespace {

const double kInf = std::numeric_limits<double>::infinity();
const DType kFloatTypes[] = {DType::F32, DType::F64};

double tol_for(DType dtype) { return dtype == DType::F64 ? 1e-12 : 1e-6; }

// Shape, dtype and every element (relative-and-absolute tolerance by dtype).
void check_values(const Tensor& t, const Shape& shape, const std::vector<double>& expected, DType dtype) {
  REQUIRE(t.defined());
  CHECK(shape_str(t.shape()) == shape_str(shape));
  CHECK(t.dtype() == dtype);
  const std::vector<double> got = t.to_vector();
  REQUIRE(got.size() == expected.size());
  const double tol = tol_for(dtype);
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CAPTURE(got[i]);
    CAPTURE(expected[i]);
    if (std::isinf(expected[i]))
      CHECK(got[i] == expected[i]);  // -inf stays exactly -inf
    else
      CHECK(std::fabs(got[i] - expected[i]) <= tol * (1.0 + std::fabs(expected[i])));
  }
}

Tensor T(const std::vector<double>& v, const Shape& s, DType dtype) { return Tensor::from_vector(v, s, dtype); }

}  // namespace

TEST_SUITE("forward") {
TEST_CASE("forward values of every op-table case that has them") {
  int checked = 0;
  for (const qkv::testing::OpCase& c : qkv::testing::op_cases()) {
    if (!c.expected) continue;
    CAPTURE(c.name);
    for (DType dt : kFloatTypes) {
      CAPTURE(dtype_name(dt));
      check_values(c.fn(c.make_inputs(dt)), c.expected->shape, c.expected->values, dt);
    }
    ++checked;
  }
  MESSAGE(checked << " cases with expected values");
  CHECK(checked > 50);
}

TEST_CASE("relu as torch.relu: NaN stays NaN, -inf gives 0, -0.0 stays -0.0") {
  for (DType dt : kFloatTypes) {
    CAPTURE(dtype_name(dt));
    // checked on 37 entries, so the vectorised loop and its scalar remainder both run
    const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
    std::vector<double> in;
    for (int i = 0; i < 37; ++i) in.push_back(std::vector<double>{nan, -inf, -0.0, inf, -1.5, 2.5}[i % 6]);
    const std::vector<double> out = relu(T(in, {37}, dt)).to_vector();
    for (int i = 0; i < 37; ++i) {
      CAPTURE(i);
      switch (i % 6) {
        case 0: CHECK(std::isnan(out[i])); break;
        case 1:
          CHECK(out[i] == 0.0);
          CHECK(!std::signbit(out[i]));
          break;
        case 2:
          CHECK(out[i] == 0.0);
          CHECK(std::signbit(out[i]));
          break;
        case 3: CHECK(out[i] == inf); break;
        case 4:
          CHECK(out[i] == 0.0);
          CHECK(!std::signbit(out[i]));
          break;
        default: CHECK(out[i] == 2.5);
      }
    }
  }
}

TEST_CASE("relu's gradient as torch's threshold_backward: g where x > 0 or x is NaN, 0 where x <= 0") {
  for (DType dt : kFloatTypes) {
    CAPTURE(dtype_name(dt));
    // 37 entries again (vector loop and remainder); the upstream gradient is 10 + i, and a NaN
    // upstream gradient where x <= 0 gives 0, as in PyTorch
    const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
    std::vector<double> in, up;
    for (int i = 0; i < 37; ++i) {
      in.push_back(std::vector<double>{nan, -inf, -0.0, inf, -1.5, 2.5, 0.0}[i % 7]);
      up.push_back(i == 4 ? nan : 10.0 + i);
    }
    Tensor x = T(in, {37}, dt);
    x.set_requires_grad(true);
    relu(x).backward(T(up, {37}, dt));
    const std::vector<double> grad = x.grad().to_vector();
    for (int i = 0; i < 37; ++i) {
      CAPTURE(i);
      const bool passes = i % 7 == 0 || i % 7 == 3 || i % 7 == 5;  // NaN, inf, 2.5
      CHECK(grad[i] == (passes ? 10.0 + i : 0.0));
      CHECK(!std::signbit(grad[i]));
    }
  }
}

TEST_CASE("max_with_indices gives int64 indices; softmax has no NaN for an all -inf row") {
  for (DType dt : kFloatTypes) {
    CAPTURE(dtype_name(dt));
    MaxResult m = max_with_indices(T({1, 5, 3, 4, 2, 6}, {2, 3}, dt), 1);
    CHECK(m.indices.dtype() == DType::I64);
    CHECK(m.indices.to_ids() == std::vector<int64_t>{1, 2});
    MaxResult m0 = max_with_indices(T({5, 1, 5, 9}, {2, 2}, dt), 0, true);
    CHECK(shape_str(m0.indices.shape()) == "(1, 2)");
    for (double v : softmax(T({1, 2, 3, -kInf, -kInf, -kInf}, {2, 3}, dt)).to_vector()) CHECK_FALSE(std::isnan(v));
  }
}

TEST_CASE("cross_entropy: the all-ignored case is NaN, as in PyTorch") {
  for (DType dt : kFloatTypes) {
    CAPTURE(dtype_name(dt));
    Tensor logits = T({1, 2, 3, 0.5, 0.5, 0.5, 2, -1, 0}, {3, 3}, dt);
    Tensor all_ignored = cross_entropy(logits, Tensor::from_ids({-100, -100, -100}, {3}), -100);
    CHECK(std::isnan(all_ignored.item()));
  }
}

TEST_CASE("dropout: seeded masks, identity when off, scaling and drop rate") {
  for (DType dt : kFloatTypes) {
    CAPTURE(dtype_name(dt));
    Tensor x = add_scalar(Tensor::arange(64, dt), 1.0);  // all nonzero
    Generator g1(123), g2(123), g3(124);
    const std::vector<double> a = dropout(x, 0.5, true, g1).to_vector();
    const std::vector<double> b = dropout(x, 0.5, true, g2).to_vector();
    const std::vector<double> c = dropout(x, 0.5, true, g3).to_vector();
    CHECK(a == b);  // same seed, same mask
    CHECK(a != c);  // another seed, another mask (64 coin flips)
    // p = 0 or evaluation mode: identity (and the generator is not consumed)
    Generator g4(5);
    check_values(dropout(x, 0.0, true, g4), {64}, x.to_vector(), dt);
    check_values(dropout(x, 0.7, false, g4), {64}, x.to_vector(), dt);
    Generator g5(5);
    CHECK(g4.next_u64() == g5.next_u64());
    // kept elements are scaled by 1 / (1 - p), dropped ones are exactly 0
    const std::vector<double> xs = x.to_vector();
    Generator g6(9);
    const std::vector<double> d = dropout(x, 0.25, true, g6).to_vector();
    int kept = 0;
    for (size_t i = 0; i < d.size(); ++i) {
      if (d[i] == 0.0) continue;
      ++kept;
      CHECK(d[i] == doctest::Approx(xs[i] / 0.75).epsilon(1e-6));
    }
    CHECK(kept > 0);
    CHECK(kept < 64);
    // about p of a large tensor is zeroed
    Tensor big = Tensor::ones({200000}, dt);
    Generator g7(2024);
    const std::vector<double> dropped = dropout(big, 0.3, true, g7).to_vector();
    int64_t zeros = 0;
    for (double v : dropped) zeros += v == 0.0;
    const double fraction = static_cast<double>(zeros) / static_cast<double>(dropped.size());
    CHECK(std::fabs(fraction - 0.3) < 0.005);  // the standard deviation is 0.001
    double total = 0;
    for (double v : dropped) total += v;
    CHECK(std::fabs(total / dropped.size() - 1.0) < 0.01);  // expectation preserved (std 0.0015)
  }
}

TEST_CASE("creation: zeros, ones, full, arange, from_vector, scalar, from_ids") {
  for (DType dt : kFloatTypes) {
    CAPTURE(dtype_name(dt));
    check_values(Tensor::zeros({2, 3}, dt), {2, 3}, {0, 0, 0, 0, 0, 0}, dt);
    check_values(Tensor::ones({4}, dt), {4}, {1, 1, 1, 1}, dt);
    check_values(Tensor::full({2, 2}, -2.5, dt), {2, 2}, {-2.5, -2.5, -2.5, -2.5}, dt);
    check_values(Tensor::arange(5, dt), {5}, {0, 1, 2, 3, 4}, dt);
    check_values(Tensor::from_vector({1.5, -2, 3.25, 0}, {2, 1, 2}, dt), {2, 1, 2}, {1.5, -2, 3.25, 0}, dt);
    check_values(Tensor::scalar(7, dt), {}, {7}, dt);
    CHECK(Tensor::scalar(7, dt).item() == 7.0);
    check_values(Tensor::zeros({0, 3}, dt), {0, 3}, {}, dt);
    Tensor t = Tensor::ones({2}, dt);
    CHECK_FALSE(t.requires_grad());
    CHECK(t.is_leaf());
    CHECK(t.device() == Device::cpu());
  }
  // float32 rounds, float64 keeps every bit
  CHECK(Tensor::from_vector({0.1}, {1}, DType::F32).item() == static_cast<double>(0.1f));
  CHECK(Tensor::from_vector({0.1}, {1}, DType::F64).item() == 0.1);
  Tensor ids = Tensor::from_ids({4, -1, 7}, {3});
  CHECK(ids.dtype() == DType::I64);
  CHECK(ids.to_ids() == std::vector<int64_t>{4, -1, 7});
  CHECK(Tensor().defined() == false);
  CHECK(Tensor::zeros({2, 3}).describe() == "float32 (2, 3) on cpu");
}

// arange takes a dtype; int64 once went through from_vector, which rejects int64.
TEST_CASE("arange in int64") { CHECK(Tensor::arange(3, DType::I64).to_ids() == std::vector<int64_t>{0, 1, 2}); }

TEST_CASE("randn and rand_uniform: seeded, and within their bounds") {
  for (DType dt : kFloatTypes) {
    CAPTURE(dtype_name(dt));
    Generator g1(42), g2(42), g3(43);
    const std::vector<double> a = randn({1000}, g1, dt).to_vector();
    const std::vector<double> b = randn({1000}, g2, dt).to_vector();
    const std::vector<double> c = randn({1000}, g3, dt).to_vector();
    CHECK(a == b);
    CHECK(a != c);
    // the generator advances: a second draw differs from the first
    CHECK(randn({1000}, g1, dt).to_vector() != a);
    double m = 0, s = 0;
    for (double v : a) m += v;
    m /= a.size();
    for (double v : a) s += (v - m) * (v - m);
    s = std::sqrt(s / a.size());
    CHECK(std::fabs(m) < 0.1);  // 3 standard errors of the mean
    CHECK(std::fabs(s - 1.0) < 0.07);
    // mean/std arguments shift and scale
    Generator g4(42);
    const std::vector<double> shifted = randn({1000}, g4, dt, Device::cpu(), 3.0, 2.0).to_vector();
    for (size_t i = 0; i < a.size(); ++i) CHECK(shifted[i] == doctest::Approx(3.0 + 2.0 * a[i]).epsilon(1e-5));

    Generator u1(7), u2(7);
    const std::vector<double> u = rand_uniform({5000}, u1, -0.25, 0.75, dt).to_vector();
    CHECK(u == rand_uniform({5000}, u2, -0.25, 0.75, dt).to_vector());
    double lo = 1e9, hi = -1e9, total = 0;
    for (double v : u) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
      total += v;
    }
    CHECK(lo >= -0.25);
    CHECK(hi <= 0.75);
    CHECK(lo < -0.2);  // the range is actually used
    CHECK(hi > 0.7);
    CHECK(std::fabs(total / u.size() - 0.25) < 0.02);  // the standard deviation is 0.004
  }
}
}
